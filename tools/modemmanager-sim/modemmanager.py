# -*- coding: utf-8 -*-
'''Simulated ModemManager (1.20) with SMS-capable modems, for Pacer's tests.

A python-dbusmock template: run it on a private bus with Debian's Python,

    DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/x/bus \\
        /usr/bin/python3 -m dbusmock --system --template tools/modemmanager-sim/modemmanager.py -p '{...}'

It owns org.freedesktop.ModemManager1 and exports what ModemManager exports
for its modems: the ObjectManager and the org.freedesktop.ModemManager1
manager interface at /org/freedesktop/ModemManager1, each modem at
/org/freedesktop/ModemManager1/Modem/N (Modem, Modem.Modem3gpp and, unless
switched off, Modem.Messaging), and the messages a client creates at
/org/freedesktop/ModemManager1/SMS/N (Sms), with ModemManager's error names,
property types, enum values and signals. See README.md beside this file.

Test controls are methods of org.pacer.ModemSim1 on
/org/freedesktop/ModemManager1 (the functions named control_*).

Parameters (-p JSON object, all optional):
  modems         list of modem specs (default: one modem, [{}]); each may give
                 "manufacturer", "model", "revision", "imei", "own_number",
                 "state" (MMModemState, 8 = registered), "signal" (percent),
                 "access_technologies" (MMModemAccessTechnology bits, 16384 =
                 LTE), "power_state" (3 = on), "messaging" (true: has the
                 Messaging interface), "operator_name", "operator_code"
  own_number     the default "own_number" of modems that give none
  send_delay     seconds Sms.Send takes before the modem answers (0.3)
  sending_state  true: State is SENDING (4) while a Send is in flight. false:
                 it stays UNKNOWN/STORED until SENT, exactly as
                 ModemManager 1.20's mm-base-sms.c does (true)
  version        the manager's Version property ("1.20.4")
'''

import os
import sys
import time

import dbus
import dbus.lowlevel
from gi.repository import GLib

from dbusmock import mockobject

# The helpers both simulators share (dbusmock loads this file by its path).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from pacertools.dbus_sim import PropertyTable, SimulatorBase, dbus_error  # noqa: E402

BUS_NAME = 'org.freedesktop.ModemManager1'
MAIN_OBJ = '/org/freedesktop/ModemManager1'
MAIN_IFACE = 'org.freedesktop.ModemManager1'
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

OBJECT_MANAGER = 'org.freedesktop.DBus.ObjectManager'
PROPERTIES = 'org.freedesktop.DBus.Properties'
INTROSPECTABLE = 'org.freedesktop.DBus.Introspectable'
PEER = 'org.freedesktop.DBus.Peer'
MANAGER = 'org.freedesktop.ModemManager1'
MODEM = 'org.freedesktop.ModemManager1.Modem'
MODEM_3GPP = 'org.freedesktop.ModemManager1.Modem.Modem3gpp'
MESSAGING = 'org.freedesktop.ModemManager1.Modem.Messaging'
SMS = 'org.freedesktop.ModemManager1.Sms'
VOICE = 'org.freedesktop.ModemManager1.Modem.Voice'
CALL = 'org.freedesktop.ModemManager1.Call'
CONTROL = 'org.pacer.ModemSim1'
CONTROL_ERROR = 'org.pacer.ModemSim1.Error.'

MODEM_PREFIX = MAIN_OBJ + '/Modem/'
SMS_PREFIX = MAIN_OBJ + '/SMS/'
CALL_PREFIX = MAIN_OBJ + '/Call/'

# MMModemState (ModemManager-enums.h)
MODEM_STATE_FAILED = -1
MODEM_STATE_UNKNOWN = 0
MODEM_STATE_DISABLED = 3
MODEM_STATE_ENABLED = 6
MODEM_STATE_REGISTERED = 8
MODEM_STATE_CONNECTED = 11
# MMModemStateChangeReason
STATE_CHANGE_REASON_UNKNOWN = 0
STATE_CHANGE_REASON_USER_REQUESTED = 1
# MMModemAccessTechnology
ACCESS_TECHNOLOGY_LTE = 1 << 14
# MMModemPowerState
POWER_STATE_ON = 3
# MMModemCapability
CAPABILITY_GSM_UMTS = 1 << 2
CAPABILITY_LTE = 1 << 3
# MMModemLock
LOCK_NONE = 1
# MMModem3gppRegistrationState
REGISTRATION_IDLE = 0
REGISTRATION_HOME = 1
# MMSmsState
SMS_STATE_UNKNOWN = 0
SMS_STATE_STORED = 1
SMS_STATE_RECEIVING = 2
SMS_STATE_RECEIVED = 3
SMS_STATE_SENDING = 4
SMS_STATE_SENT = 5
# MMSmsPduType
SMS_PDU_TYPE_SUBMIT = 2
SMS_PDU_TYPE_STATUS_REPORT = 3
# MMSmsStorage and the names mm_sms_storage_get_string gives them
SMS_STORAGE_UNKNOWN = 0
SMS_STORAGE_SM = 1
SMS_STORAGE_ME = 2
STORAGE_NAMES = {0: 'unknown', 1: 'sm', 2: 'me', 3: 'mt', 4: 'sr', 5: 'bm', 6: 'ta'}
# MMSmsValidityType
VALIDITY_UNKNOWN = 0
VALIDITY_RELATIVE = 1
# MMSmsDeliveryState (3GPP TS 23.040 TP-Status; 0x100 when there is none)
DELIVERY_STATE_COMPLETED_RECEIVED = 0x00
DELIVERY_STATE_UNKNOWN = 0x100

# MMCallState, and the names mmcli gives them
CALL_STATE_UNKNOWN = 0
CALL_STATE_DIALING = 1
CALL_STATE_RINGING_OUT = 2
CALL_STATE_ACTIVE = 4
CALL_STATE_TERMINATED = 7
CALL_STATE_NAMES = {0: 'unknown', 1: 'dialing', 2: 'ringing-out', 3: 'ringing-in', 4: 'active', 5: 'held',
                    6: 'waiting', 7: 'terminated'}
# MMCallStateReason
CALL_REASON_UNKNOWN = 0
CALL_REASON_OUTGOING_STARTED = 1
CALL_REASON_ACCEPTED = 3
CALL_REASON_TERMINATED = 4
# MMCallDirection
CALL_DIRECTION_OUTGOING = 2

# Error domains (ModemManager-errors.h: MM_DBUS_ERROR_PREFIX + domain + nick).
CORE_ERROR = 'org.freedesktop.ModemManager1.Error.Core.'
MESSAGE_ERROR = 'org.freedesktop.ModemManager1.Error.Message.'

LOG_LEVELS = ('ERR', 'WARN', 'MSG', 'INFO', 'DEBUG')

DEFAULT_MODEM = {
    'manufacturer': 'Quectel',
    'model': 'EC25',
    'revision': 'EC25EFAR06A08M4G',
    'imei': '867698041234567',
    'own_number': None,
    'state': MODEM_STATE_REGISTERED,
    'signal': 74,
    'access_technologies': ACCESS_TECHNOLOGY_LTE,
    'power_state': POWER_STATE_ON,
    'messaging': True,
    'voice': True,
    'operator_name': 'Pacer Mobile',
    'operator_code': '00101',
}

DEFAULTS = {
    'send_delay': 0.3,
    'sending_state': True,
    'ring_delay': 0.2,
    'answer_delay': 0.3,
    'remote_hangup_after': None,
    'report_delay': None,
    'report_state': DELIVERY_STATE_COMPLETED_RECEIVED,
    'version': '1.20.4',
    'own_number': '+15555550100',
}

SIM = None


def log(message):
    '''One line on stdout (the fixture keeps it in a file).'''
    sys.stdout.write(f'{time.monotonic():.3f} {message}\n')
    sys.stdout.flush()


# --- D-Bus plumbing -------------------------------------------------------


def core_error(nick, message):
    return dbus.exceptions.DBusException(message, name=CORE_ERROR + nick)


def control_error(name, message):
    return dbus.exceptions.DBusException(message, name=CONTROL_ERROR + name)


def export_method(obj, interface, name, in_args, out_args, impl, asynchronous=False):
    '''Adds method `name` to one object through dbusmock's per-object method
    table: it neither logs nor emits dbusmock's MethodCalled signal
    (ModemManager sends no such thing). `in_args` and `out_args` are
    (name, signature) pairs, as ModemManager's introspection data names them.'''
    def method(_self, *args, **keywords):
        return impl(*args, **keywords)
    method.__name__ = name
    method._dbus_is_method = True
    method._dbus_interface = interface
    method._dbus_in_signature = ''.join(t for _, t in in_args)
    method._dbus_out_signature = ''.join(t for _, t in out_args)
    method._dbus_async_callbacks = ('reply', 'error') if asynchronous else None
    method._dbus_sender_keyword = None
    for keyword in ('path', 'rel_path', 'destination', 'message', 'connection'):
        setattr(method, f'_dbus_{keyword}_keyword', None)
    method._dbus_args = [n for n, _ in in_args]
    method._dbus_get_args_options = {'byte_arrays': False}
    method._pacer_args = (list(in_args), list(out_args))
    obj.methods.setdefault(interface, {})[name] = (method._dbus_in_signature, method._dbus_out_signature, '', method)


def strings(items):
    return dbus.Array([dbus.String(i) for i in items], signature='s')


def paths(items):
    return dbus.Array([dbus.ObjectPath(p) for p in items], signature='o')


def uints(items):
    return dbus.Array([dbus.UInt32(i) for i in items], signature='u')


def later(seconds, callback, *args):
    '''A one-shot GLib timeout; returns its source id.'''
    def fire():
        callback(*args)
        return False
    return GLib.timeout_add(max(0, int(round(seconds * 1000))), fire)


class Emitter:
    '''PropertiesChanged goes out from an idle callback, after the method
    reply, as GDBus skeletons send it; changes to one interface of one object
    made before that coalesce into one signal with the latest values.'''

    def __init__(self, connection):
        self.connection = connection
        self.pending = {}   # (path, interface) -> {name: value}, in order
        self.source = None

    def changed(self, path, interface, values):
        self.pending.setdefault((path, interface), {}).update(values)
        if self.source is None:
            self.source = GLib.idle_add(self._idle)

    def forget(self, path):
        for key in [k for k in self.pending if k[0] == path]:
            del self.pending[key]

    def _idle(self):
        self.source = None
        self.flush()
        return False

    def flush(self):
        pending, self.pending = self.pending, {}
        for (path, interface), values in pending.items():
            self.signal(path, PROPERTIES, 'PropertiesChanged', 'sa{sv}as', [
                interface, dbus.Dictionary(values, signature='sv'), dbus.Array([], signature='s')])

    def signal(self, path, interface, member, signature, args):
        message = dbus.lowlevel.SignalMessage(path, interface, member)
        message.append(*args, signature=signature)
        self.connection.send_message(message)


class Node(PropertyTable):
    '''One exported object: its interfaces, properties and signals, with
    Properties.Get/GetAll/Set answering as GDBus does for ModemManager's
    skeletons (every ModemManager property is read-only) and Introspect
    describing what ModemManager's introspection data describes (not
    dbusmock's own Mock interface, nor the test controls).'''

    def __init__(self, sim, path, obj=None):
        self.sim = sim
        self.path = path
        if obj is None:
            sim.root.AddObject(path, PROPERTIES, {}, [])
            obj = mockobject.objects[path]
        self.obj = obj
        self.obj.props = {}
        self.signals = {}
        export_method(self.obj, PROPERTIES, 'Get', [('interface_name', 's'), ('property_name', 's')],
                      [('value', 'v')], self._get)
        export_method(self.obj, PROPERTIES, 'GetAll', [('interface_name', 's')], [('properties', 'a{sv}')],
                      self._get_all)
        export_method(self.obj, PROPERTIES, 'Set', [('interface_name', 's'), ('property_name', 's'), ('value', 'v')],
                      [], self._set)
        export_method(self.obj, INTROSPECTABLE, 'Introspect', [], [('xml_data', 's')], self._introspect)

    def add_interface(self, interface, props, methods=(), signals=()):
        '''`methods`: (name, in_args, out_args, impl, asynchronous);
        `signals`: (name, args); args are (name, signature) pairs.'''
        self.obj.props[interface] = dict(props)
        for name, in_args, out_args, impl, asynchronous in methods:
            export_method(self.obj, interface, name, in_args, out_args, impl, asynchronous)
        self.signals[interface] = list(signals)

    def interfaces(self):
        return dbus.Dictionary(
            {name: dbus.Dictionary(props, signature='sv') for name, props in self.obj.props.items()},
            signature='sa{sv}')

    def get(self, interface, name):
        return self.obj.props[interface][name]

    def set(self, interface, **changes):
        '''Sets properties, announcing those whose value changed.'''
        props = self.obj.props[interface]
        changed = {k: v for k, v in changes.items() if k not in props or props[k] != v}
        props.update(changed)
        if changed:
            self.sim.emitter.changed(self.path, interface, changed)

    def destroy(self):
        self.sim.emitter.forget(self.path)
        self.sim.root.RemoveObject(self.path)

    def _set(self, interface, name, value):
        self._require_interface(interface)
        if name not in self.obj.props[interface]:
            raise dbus_error('InvalidArgs', f"No such property '{name}'")
        raise dbus_error('InvalidArgs', f"Property '{name}' is not writable")

    def _introspect(self):
        def args(pairs, direction=None):
            return ''.join(f'<arg name="{n}" type="{escape(t)}"' + (f' direction="{direction}"' if direction else '')
                           + '/>' for n, t in pairs)
        lines = [INTROSPECT_HEADER, '<node>']
        standard = [(PROPERTIES, '<method name="Get"><arg name="interface_name" type="s" direction="in"/>'
                     '<arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="out"/>'
                     '</method><method name="GetAll"><arg name="interface_name" type="s" direction="in"/>'
                     '<arg name="properties" type="a{sv}" direction="out"/></method><method name="Set">'
                     '<arg name="interface_name" type="s" direction="in"/><arg name="property_name" type="s" direction="in"/>'
                     '<arg name="value" type="v" direction="in"/></method><signal name="PropertiesChanged">'
                     '<arg name="interface_name" type="s"/><arg name="changed_properties" type="a{sv}"/>'
                     '<arg name="invalidated_properties" type="as"/></signal>'),
                    (INTROSPECTABLE, '<method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>'),
                    (PEER, '<method name="Ping"/><method name="GetMachineId">'
                     '<arg name="machine_uuid" type="s" direction="out"/></method>')]
        if self.path == MAIN_OBJ:
            standard.append((OBJECT_MANAGER, '<method name="GetManagedObjects">'
                             '<arg name="object_paths_interfaces_and_properties" type="a{oa{sa{sv}}}" direction="out"/>'
                             '</method><signal name="InterfacesAdded"><arg name="object_path" type="o"/>'
                             '<arg name="interfaces_and_properties" type="a{sa{sv}}"/></signal>'
                             '<signal name="InterfacesRemoved"><arg name="object_path" type="o"/>'
                             '<arg name="interfaces" type="as"/></signal>'))
        for name, body in standard:
            lines.append(f'<interface name="{name}">{body}</interface>')
        for interface in self.obj.props:
            lines.append(f'<interface name="{interface}">')
            for name, entry in self.obj.methods.get(interface, {}).items():
                in_args, out_args = entry[3]._pacer_args
                lines.append(f'<method name="{name}">{args(in_args, "in")}{args(out_args, "out")}</method>')
            for name, signal_args in self.signals.get(interface, []):
                lines.append(f'<signal name="{name}">{args(signal_args)}</signal>')
            for name, value in self.obj.props[interface].items():
                signature = dbus.lowlevel.Message.guess_signature(value)
                lines.append(f'<property name="{name}" type="{escape(signature)}" access="read"/>')
            lines.append('</interface>')
        for child in self.sim.connection.list_exported_child_objects(self.path):
            lines.append(f'<node name="{child}"/>')
        lines.append('</node>')
        return '\n'.join(lines)


def iso8601(seconds):
    '''As ModemManager formats SMS timestamps (mm_new_iso8601_time).'''
    return time.strftime('%Y-%m-%dT%H:%M:%S+00:00', time.gmtime(seconds))


def escape(text):
    return text.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('"', '&quot;')


INTROSPECT_HEADER = ('<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"\n'
                     '"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">')


# --- Messages ----------------------------------------------------------------


class Sms:
    '''One message a client created (mm-base-sms.c): state UNKNOWN until
    stored or sent, PDU type SUBMIT, never received.'''

    def __init__(self, sim, modem, number, spec):
        self.sim = sim
        self.modem = modem
        self.index = sim.next_sms_index
        sim.next_sms_index += 1
        self.path = SMS_PREFIX + str(self.index)
        self.sending = False
        self.created_at = time.monotonic()
        self.node = Node(sim, self.path)
        validity = spec.get('validity')
        if validity is not None and int(validity[0]) == VALIDITY_RELATIVE:
            validity = dbus.Struct((dbus.UInt32(VALIDITY_RELATIVE), dbus.UInt32(validity[1], variant_level=1)),
                                   signature='uv')
        else:
            validity = dbus.Struct((dbus.UInt32(VALIDITY_UNKNOWN), dbus.Boolean(False, variant_level=1)),
                                   signature='uv')
        text = spec.get('text')
        data = spec.get('data')
        self.node.add_interface(SMS, {
            'State': dbus.UInt32(SMS_STATE_UNKNOWN),
            'PduType': dbus.UInt32(SMS_PDU_TYPE_SUBMIT),
            'Number': dbus.String(number),
            'Text': dbus.String(text if text is not None else ''),
            'Data': dbus.Array([dbus.Byte(b) for b in (data or [])], signature='y'),
            'SMSC': dbus.String(spec.get('smsc', '')),
            'Validity': validity,
            'Class': dbus.Int32(spec.get('class', -1)),
            'TeleserviceId': dbus.UInt32(spec.get('teleservice-id', 0)),
            'ServiceCategory': dbus.UInt32(spec.get('service-category', 0)),
            'DeliveryReportRequest': dbus.Boolean(spec.get('delivery-report-request', False)),
            'MessageReference': dbus.UInt32(0),
            'Timestamp': dbus.String(''),
            'DischargeTimestamp': dbus.String(''),
            'DeliveryState': dbus.UInt32(DELIVERY_STATE_UNKNOWN),
            'Storage': dbus.UInt32(SMS_STORAGE_UNKNOWN),
        }, [
            ('Send', [], [], self.dbus_send, True),
            ('Store', [('storage', 'u')], [], self.dbus_store, False),
        ])

    @property
    def state(self):
        return int(self.node.get(SMS, 'State'))

    def dbus_store(self, storage):
        storage = int(storage)
        if storage == SMS_STORAGE_UNKNOWN:
            storage = int(self.modem.node.get(MESSAGING, 'DefaultStorage'))
        current = int(self.node.get(SMS, 'Storage'))
        if current != SMS_STORAGE_UNKNOWN:
            if current == storage:
                return
            raise core_error('Failed', f"SMS is already stored in storage '{STORAGE_NAMES.get(current)}', "
                                       f"cannot store it in storage '{STORAGE_NAMES.get(storage)}'")
        if storage not in [int(s) for s in self.modem.node.get(MESSAGING, 'SupportedStorages')]:
            raise core_error('Unsupported', f"Storage '{STORAGE_NAMES.get(storage, storage)}' is not supported for storing")
        changes = {'Storage': dbus.UInt32(storage)}
        if self.state == SMS_STATE_UNKNOWN:
            changes['State'] = dbus.UInt32(SMS_STATE_STORED)
        self.node.set(SMS, **changes)
        log(f'{self.path}: stored in {STORAGE_NAMES.get(storage)}')

    def dbus_send(self, reply, error):
        sim = self.sim
        state = self.state
        sim.stats['send_calls'] += 1
        # When the modem heard of it: where a sender's latency is measured to.
        sim.send_log.append((self.path, self.number(), self.text(), self.created_at, time.monotonic()))
        if state in (SMS_STATE_RECEIVED, SMS_STATE_RECEIVING):
            raise core_error('Failed', 'This SMS was received, cannot send it')
        if state == SMS_STATE_SENT:
            raise core_error('Failed', 'This SMS was already sent, cannot send it again')
        if self.sending:
            # ModemManager would send it twice; a client doing that has a bug.
            raise core_error('InProgress', 'This SMS is already being sent')
        self.sending = True
        previous = state
        if sim.params['sending_state']:
            self.node.set(SMS, State=dbus.UInt32(SMS_STATE_SENDING))
        if sim.hang:
            sim.stats['hung'] += 1
            sim.hung.append((self, reply, error))
            log(f'{self.path}: send to {self.number()} hangs (no reply, ever)')
            return
        failure = None
        if sim.failures:
            failure = sim.failures.pop(0)
        elif self.modem.state < MODEM_STATE_REGISTERED:
            # The modem's +CMGS answers with a message error when it has no network.
            failure = (MESSAGE_ERROR + 'NoNetwork', 'No network')
        sim.pending += 1
        log(f'{self.path}: sending to {self.number()} ({len(self.text())} characters), '
            f'answer in {sim.params["send_delay"]} s' + (f', will fail with {failure[0]}' if failure else ''))
        later(sim.params['send_delay'], self.send_done, previous, failure, reply, error)

    def send_done(self, previous, failure, reply, error):
        sim = self.sim
        sim.pending -= 1
        self.sending = False
        if self.node is None:
            # The modem went while the message was on its way.
            error(core_error('Aborted', 'Modem was removed'))
            return
        if failure is not None:
            name, message = failure
            sim.stats['failed'] += 1
            self.node.set(SMS, State=dbus.UInt32(previous))
            log(f'{self.path}: send failed: {name}: {message}')
            error(dbus.exceptions.DBusException(message, name=name))
            return
        sim.message_reference = sim.message_reference % 255 + 1
        self.node.set(SMS, State=dbus.UInt32(SMS_STATE_SENT),
                      MessageReference=dbus.UInt32(sim.message_reference))
        sim.stats['sent'] += 1
        sim.sent.append((self.number(), self.text(), time.time(), self.path))
        log(f'{self.path}: sent to {self.number()}, message reference {sim.message_reference}')
        reply()
        if bool(self.node.get(SMS, 'DeliveryReportRequest')) and sim.params['report_delay'] is not None:
            # The SMSC's status report reaches the modem later, as a message of its own.
            later(sim.params['report_delay'], self.modem.status_report, self.number(), sim.message_reference,
                  sim.params['report_state'], time.time())

    def received_status_report(self, reference, delivery_state, submitted, discharged):
        '''Makes this a status report the modem received (mm-sms-part-3gpp.c
        parses TP-RA into Number, TP-MR, TP-SCTS, TP-DT and TP-ST), before
        anyone is told of it: no PropertiesChanged.'''
        self.node.obj.props[SMS].update({
            'State': dbus.UInt32(SMS_STATE_RECEIVED),
            'PduType': dbus.UInt32(SMS_PDU_TYPE_STATUS_REPORT),
            'MessageReference': dbus.UInt32(reference),
            'Timestamp': dbus.String(iso8601(submitted)),
            'DischargeTimestamp': dbus.String(iso8601(discharged)),
            'DeliveryState': dbus.UInt32(delivery_state),
        })

    def number(self):
        return str(self.node.get(SMS, 'Number'))

    def text(self):
        return str(self.node.get(SMS, 'Text'))

    def destroy(self):
        if self.node is not None:
            self.node.destroy()
            self.node = None


# --- Calls -------------------------------------------------------------------


class Call:
    '''One outgoing call a client created (mm-base-call.c): UNKNOWN until
    Start, then DIALING, RINGING_OUT after `ring_delay`, ACTIVE after
    `answer_delay` more (the other end answers; null: it never does), and
    TERMINATED on Hangup, on the control RemoteHangup or after
    `remote_hangup_after` s active. Each change is a StateChanged(i old, i new,
    u reason) signal and a PropertiesChanged of State and StateReason. The
    object stays until Voice.DeleteCall.'''

    def __init__(self, sim, modem, number):
        self.sim = sim
        self.modem = modem
        self.index = sim.next_call_index
        sim.next_call_index += 1
        self.path = CALL_PREFIX + str(self.index)
        # What the tests read back (Calls()).
        self.record = {'number': number, 'path': self.path, 'states': [CALL_STATE_NAMES[CALL_STATE_UNKNOWN]],
                       'ended_by': '', 'created': time.time(), 'active_at': 0.0}
        sim.calls.append(self.record)
        self.node = Node(sim, self.path)
        self.node.add_interface(CALL, {
            'State': dbus.Int32(CALL_STATE_UNKNOWN),
            'StateReason': dbus.Int32(CALL_REASON_UNKNOWN),
            'Direction': dbus.Int32(CALL_DIRECTION_OUTGOING),
            'Number': dbus.String(number),
            'Multiparty': dbus.Boolean(False),
            'AudioPort': dbus.String(''),
            'AudioFormat': dbus.Dictionary({}, signature='sv'),
        }, [
            ('Start', [], [], self.dbus_start, False),
            ('Accept', [], [], self.dbus_accept, False),
            ('Hangup', [], [], self.dbus_hangup, False),
            ('SendDtmf', [('dtmf', 's')], [], self.dbus_send_dtmf, False),
        ], [
            ('DtmfReceived', [('dtmf', 's')]),
            ('StateChanged', [('old', 'i'), ('new', 'i'), ('reason', 'u')]),
        ])

    @property
    def state(self):
        return int(self.node.get(CALL, 'State'))

    def set_state(self, state, reason):
        if self.node is None or self.state == state:
            return
        old = self.state
        self.node.set(CALL, State=dbus.Int32(state), StateReason=dbus.Int32(reason))
        self.sim.emitter.signal(self.path, CALL, 'StateChanged', 'iiu',
                                [dbus.Int32(old), dbus.Int32(state), dbus.UInt32(reason)])
        self.record['states'].append(CALL_STATE_NAMES[state])
        if state == CALL_STATE_ACTIVE:
            self.record['active_at'] = time.time()
        log(f'{self.path}: call to {self.record["number"]} {CALL_STATE_NAMES[old]} -> {CALL_STATE_NAMES[state]}')

    def after(self, seconds, state, reason):
        '''The network's next step, unless the call ended before it.'''
        def step():
            if self.node is not None and self.state != CALL_STATE_TERMINATED:
                self.set_state(state, reason)
                self.scheduled(state)
        later(seconds, step)

    def scheduled(self, state):
        params = self.sim.params
        if state == CALL_STATE_DIALING:
            self.after(params['ring_delay'], CALL_STATE_RINGING_OUT, CALL_REASON_OUTGOING_STARTED)
        elif state == CALL_STATE_RINGING_OUT and params['answer_delay'] is not None:
            self.after(params['answer_delay'], CALL_STATE_ACTIVE, CALL_REASON_ACCEPTED)
        elif state == CALL_STATE_ACTIVE and params['remote_hangup_after'] is not None:
            later(params['remote_hangup_after'], self.remote_hangup)

    def ended_by(self, who):
        if not self.record['ended_by']:
            self.record['ended_by'] = who

    def dbus_start(self):
        self.sim.stats['calls_started'] += 1
        if self.state != CALL_STATE_UNKNOWN:
            raise core_error('Failed', 'This call was not in unknown state, cannot start it')
        if self.modem.state < MODEM_STATE_REGISTERED:
            # ATD fails without a network.
            raise core_error('Failed', 'Couldn\'t start call: no network')
        self.set_state(CALL_STATE_DIALING, CALL_REASON_OUTGOING_STARTED)
        self.scheduled(CALL_STATE_DIALING)

    def dbus_accept(self):
        raise core_error('Failed', 'This call was not ringing, cannot accept')

    def dbus_hangup(self):
        self.sim.stats['hangups'] += 1
        if self.state == CALL_STATE_TERMINATED:
            raise core_error('Failed', 'This call was already terminated')
        self.ended_by('client')
        self.set_state(CALL_STATE_TERMINATED, CALL_REASON_TERMINATED)

    def remote_hangup(self):
        if self.node is None or self.state in (CALL_STATE_UNKNOWN, CALL_STATE_TERMINATED):
            return False
        self.ended_by('remote')
        self.set_state(CALL_STATE_TERMINATED, CALL_REASON_TERMINATED)
        return True

    def dbus_send_dtmf(self, dtmf):
        if self.state != CALL_STATE_ACTIVE:
            raise core_error('Failed', 'This call was not active, cannot send DTMF')

    def destroy(self):
        # Pending steps find the node gone and do nothing.
        if self.node is not None:
            if self.state not in (CALL_STATE_UNKNOWN, CALL_STATE_TERMINATED):
                self.ended_by('removed')
                self.record['states'].append(CALL_STATE_NAMES[CALL_STATE_TERMINATED])
            self.node.destroy()
            self.node = None


# --- Modems ------------------------------------------------------------------


class Modem:
    def __init__(self, sim, spec):
        self.sim = sim
        self.spec = dict(DEFAULT_MODEM)
        self.spec['own_number'] = sim.params['own_number']
        self.spec.update({k: v for k, v in spec.items() if k in DEFAULT_MODEM})
        self.index = sim.next_modem_index
        sim.next_modem_index += 1
        self.path = MODEM_PREFIX + str(self.index)
        self.messages = []
        self.calls = []
        self.node = Node(sim, self.path)
        spec = self.spec
        self.node.add_interface(MODEM, {
            'Sim': dbus.ObjectPath(f'{MAIN_OBJ}/SIM/{self.index}'),
            'SimSlots': paths([]),
            'PrimarySimSlot': dbus.UInt32(0),
            'Bearers': paths([]),
            'SupportedCapabilities': uints([CAPABILITY_GSM_UMTS | CAPABILITY_LTE]),
            'CurrentCapabilities': dbus.UInt32(CAPABILITY_GSM_UMTS | CAPABILITY_LTE),
            'MaxBearers': dbus.UInt32(1),
            'MaxActiveBearers': dbus.UInt32(1),
            'MaxActiveMultiplexedBearers': dbus.UInt32(0),
            'Manufacturer': dbus.String(spec['manufacturer']),
            'Model': dbus.String(spec['model']),
            'Revision': dbus.String(spec['revision']),
            'CarrierConfiguration': dbus.String(''),
            'CarrierConfigurationRevision': dbus.String(''),
            'HardwareRevision': dbus.String('10000'),
            'DeviceIdentifier': dbus.String(f'{0x5a17 + self.index:040x}'),
            'Device': dbus.String(f'/sys/devices/platform/soc/fe980000.usb/usb1/1-1/1-1.{self.index + 1}'),
            'Drivers': strings(['option', 'qmi_wwan']),
            'Plugin': dbus.String(spec['manufacturer'].lower()),
            'PrimaryPort': dbus.String(f'cdc-wdm{self.index}'),
            'Ports': dbus.Array([
                dbus.Struct((dbus.String(f'cdc-wdm{self.index}'), dbus.UInt32(6)), signature='su'),
                dbus.Struct((dbus.String(f'ttyUSB{self.index * 4 + 2}'), dbus.UInt32(3)), signature='su'),
                dbus.Struct((dbus.String(f'wwan{self.index}'), dbus.UInt32(2)), signature='su'),
            ], signature='(su)'),
            'EquipmentIdentifier': dbus.String(spec['imei']),
            'UnlockRequired': dbus.UInt32(LOCK_NONE),
            'UnlockRetries': dbus.Dictionary({}, signature='uu'),
            'State': dbus.Int32(spec['state']),
            'StateFailedReason': dbus.UInt32(0),
            'AccessTechnologies': dbus.UInt32(spec['access_technologies'] if spec['state'] >= MODEM_STATE_REGISTERED else 0),
            'SignalQuality': dbus.Struct((dbus.UInt32(spec['signal']), dbus.Boolean(True)), signature='ub'),
            'OwnNumbers': strings([spec['own_number']] if spec['own_number'] else []),
            'PowerState': dbus.UInt32(spec['power_state']),
            'SupportedModes': dbus.Array([dbus.Struct((dbus.UInt32(14), dbus.UInt32(0)), signature='uu')], signature='(uu)'),
            'CurrentModes': dbus.Struct((dbus.UInt32(14), dbus.UInt32(0)), signature='uu'),
            'SupportedBands': uints([]),
            'CurrentBands': uints([]),
            'SupportedIpFamilies': dbus.UInt32(7),
        }, [
            ('Enable', [('enable', 'b')], [], self.dbus_enable, False),
        ], [
            ('StateChanged', [('old', 'i'), ('new', 'i'), ('reason', 'u')]),
        ])
        self.node.add_interface(MODEM_3GPP, {
            'Imei': dbus.String(spec['imei']),
            'RegistrationState': dbus.UInt32(REGISTRATION_HOME if spec['state'] >= MODEM_STATE_REGISTERED else REGISTRATION_IDLE),
            'OperatorCode': dbus.String(spec['operator_code']),
            'OperatorName': dbus.String(spec['operator_name']),
            'EnabledFacilityLocks': dbus.UInt32(0),
        })
        if spec['messaging']:
            self.node.add_interface(MESSAGING, {
                'Messages': paths([]),
                'SupportedStorages': uints([SMS_STORAGE_SM, SMS_STORAGE_ME]),
                'DefaultStorage': dbus.UInt32(SMS_STORAGE_ME),
            }, [
                ('List', [], [('result', 'ao')], self.dbus_list, False),
                ('Delete', [('path', 'o')], [], self.dbus_delete, False),
                ('Create', [('properties', 'a{sv}')], [('path', 'o')], self.dbus_create, False),
            ], [
                ('Added', [('path', 'o'), ('received', 'b')]),
                ('Deleted', [('path', 'o')]),
            ])
        if spec['voice']:
            self.node.add_interface(VOICE, {
                'Calls': paths([]),
                'EmergencyOnly': dbus.Boolean(False),
            }, [
                ('ListCalls', [], [('result', 'ao')], self.dbus_list_calls, False),
                ('DeleteCall', [('path', 'o')], [], self.dbus_delete_call, False),
                ('CreateCall', [('properties', 'a{sv}')], [('path', 'o')], self.dbus_create_call, False),
                ('HangupAll', [], [], self.dbus_hangup_all, False),
            ], [
                ('CallAdded', [('path', 'o')]),
                ('CallDeleted', [('path', 'o')]),
            ])
        log(f'{self.path}: modem {spec["manufacturer"]} {spec["model"]} exported'
            f'{"" if spec["messaging"] else " (no messaging)"}')

    @property
    def state(self):
        return int(self.node.get(MODEM, 'State'))

    def set_state(self, state, reason=STATE_CHANGE_REASON_UNKNOWN):
        old = self.state
        if old == state:
            return
        registered = state >= MODEM_STATE_REGISTERED
        self.node.set(MODEM, State=dbus.Int32(state),
                      AccessTechnologies=dbus.UInt32(self.spec['access_technologies'] if registered else 0))
        self.node.set(MODEM_3GPP, RegistrationState=dbus.UInt32(REGISTRATION_HOME if registered else REGISTRATION_IDLE))
        self.sim.emitter.signal(self.path, MODEM, 'StateChanged', 'iiu',
                                [dbus.Int32(old), dbus.Int32(state), dbus.UInt32(reason)])
        log(f'{self.path}: state {old} -> {state}')

    def dbus_enable(self, enable):
        self.set_state(MODEM_STATE_REGISTERED if enable else MODEM_STATE_DISABLED, STATE_CHANGE_REASON_USER_REQUESTED)

    def require_enabled(self, what):
        if self.state < MODEM_STATE_ENABLED:
            raise core_error('WrongState', f'Cannot {what}: device not yet enabled')

    def dbus_list(self):
        self.require_enabled('list SMS messages')
        return paths([m.path for m in self.messages])

    def dbus_create(self, properties):
        self.require_enabled('create SMS')
        spec = {}
        # mm-sms-properties.c: these keys and types, anything else is refused.
        types = {'text': dbus.String, 'number': dbus.String, 'smsc': dbus.String, 'class': dbus.Int32,
                 'delivery-report-request': dbus.Boolean, 'teleservice-id': dbus.UInt32,
                 'service-category': dbus.UInt32}
        for key, value in properties.items():
            key = str(key)
            if key == 'data':
                spec['data'] = [int(b) for b in value]
            elif key == 'validity':
                if not isinstance(value, dbus.Struct) or len(value) != 2:
                    raise core_error('InvalidArgs', "Invalid 'validity' value: expected (uv)")
                spec['validity'] = (int(value[0]), value[1])
            elif key in types:
                if not isinstance(value, types[key]):
                    raise core_error('InvalidArgs', f"Invalid properties dictionary, wrong type for key '{key}'")
                spec[key] = value
            else:
                raise core_error('InvalidArgs', f"Invalid properties dictionary, unexpected key '{key}'")
        text = spec.get('text')
        data = spec.get('data')
        if 'number' not in spec or (text is None and data is None):
            missing = 'number' if 'number' not in spec else "text' or 'data"
            raise core_error('InvalidArgs', f"Cannot create SMS: mandatory parameter '{missing}' is missing")
        if text is not None and data is not None:
            raise core_error('InvalidArgs', "Cannot create SMS: both 'text' and 'data' given")
        sms = Sms(self.sim, self, str(spec['number']), spec)
        self.messages.append(sms)
        self.sim.stats['created'] += 1
        self.sim.emitter.signal(self.path, MESSAGING, 'Added', 'ob',
                                [dbus.ObjectPath(sms.path), dbus.Boolean(False)])
        self.node.set(MESSAGING, Messages=paths([m.path for m in self.messages]))
        log(f'{sms.path}: created on {self.path} for {sms.number()}')
        return dbus.ObjectPath(sms.path)

    def status_report(self, number, reference, delivery_state, submitted):
        '''A status report arrives (+CDS): ModemManager does not touch the
        message it refers to but exports a new one, PduType STATUS_REPORT and
        State RECEIVED, with the sent message's MessageReference, and
        announces it with Added(path, true).'''
        if self.node is None or self not in self.sim.modems:
            return
        sms = Sms(self.sim, self, number, {'text': ''})
        sms.received_status_report(reference, delivery_state, submitted, time.time())
        self.messages.append(sms)
        self.sim.stats['reports'] += 1
        self.sim.emitter.signal(self.path, MESSAGING, 'Added', 'ob', [dbus.ObjectPath(sms.path), dbus.Boolean(True)])
        self.node.set(MESSAGING, Messages=paths([m.path for m in self.messages]))
        log(f'{sms.path}: status report for {number} (message reference {reference}): delivery state 0x{delivery_state:02x}')

    def dbus_delete(self, path):
        self.require_enabled('delete SMS')
        sms = next((m for m in self.messages if m.path == str(path)), None)
        if sms is None:
            raise core_error('NotFound', f"No SMS found with path '{path}'")
        self.messages.remove(sms)
        sms.destroy()
        self.sim.stats['deleted'] += 1
        self.sim.emitter.signal(self.path, MESSAGING, 'Deleted', 'o', [dbus.ObjectPath(sms.path)])
        self.node.set(MESSAGING, Messages=paths([m.path for m in self.messages]))
        log(f'{sms.path}: deleted')

    def dbus_list_calls(self):
        self.require_enabled('list calls')
        return paths([c.path for c in self.calls])

    def dbus_create_call(self, properties):
        self.require_enabled('create CALL')
        # mm-call-properties.c: 'number' is mandatory; the other keys describe incoming calls.
        for key in properties:
            if str(key) != 'number':
                raise core_error('InvalidArgs', f"Invalid properties dictionary, unexpected key '{key}'")
        number = properties.get('number')
        if number is None:
            raise core_error('InvalidArgs', "Cannot create call: mandatory parameter 'number' is missing")
        if not isinstance(number, dbus.String):
            raise core_error('InvalidArgs', "Invalid properties dictionary, wrong type for key 'number'")
        call = Call(self.sim, self, str(number))
        self.calls.append(call)
        self.sim.stats['calls_created'] += 1
        self.sim.emitter.signal(self.path, VOICE, 'CallAdded', 'o', [dbus.ObjectPath(call.path)])
        self.node.set(VOICE, Calls=paths([c.path for c in self.calls]))
        log(f'{call.path}: created on {self.path} for {number}')
        return dbus.ObjectPath(call.path)

    def dbus_delete_call(self, path):
        call = next((c for c in self.calls if c.path == str(path)), None)
        if call is None:
            raise core_error('NotFound', f"No call found with path '{path}'")
        self.calls.remove(call)
        call.destroy()
        self.sim.stats['calls_deleted'] += 1
        self.sim.emitter.signal(self.path, VOICE, 'CallDeleted', 'o', [dbus.ObjectPath(call.path)])
        self.node.set(VOICE, Calls=paths([c.path for c in self.calls]))
        log(f'{call.path}: deleted')

    def dbus_hangup_all(self):
        for call in self.calls:
            if call.state not in (CALL_STATE_UNKNOWN, CALL_STATE_TERMINATED):
                call.ended_by('client')
                call.set_state(CALL_STATE_TERMINATED, CALL_REASON_TERMINATED)

    def destroy(self):
        for call in self.calls:
            call.destroy()
        self.calls = []
        for sms in self.messages:
            sms.destroy()
        self.messages = []
        self.node.destroy()
        log(f'{self.path}: modem removed')


# --- The simulator ------------------------------------------------------------


class Simulator(SimulatorBase):
    def __init__(self, root, parameters):
        super().__init__(root, parameters, DEFAULTS)
        self.params['send_delay'] = float(self.params['send_delay'])
        self.params['sending_state'] = bool(self.params['sending_state'])
        self.params['report_state'] = int(self.params['report_state'])
        for key in ('ring_delay', 'answer_delay', 'remote_hangup_after', 'report_delay'):
            if self.params[key] is not None:
                self.params[key] = float(self.params[key])
        self.emitter = Emitter(self.connection)
        self.modems = []
        self.next_modem_index = 0
        self.next_sms_index = 0
        self.next_call_index = 0
        self.calls = []
        self.message_reference = 0
        self.hang = False
        self.hung = []
        self.failures = []
        self.pending = 0
        self.sent = []
        self.send_log = []
        self.logging = 'INFO'
        self.stats = dict(created=0, send_calls=0, sent=0, failed=0, hung=0, deleted=0, reports=0,
                          modems_added=0, modems_removed=0, calls_created=0, calls_started=0, hangups=0,
                          calls_deleted=0)

        self.manager = Node(self, MAIN_OBJ, obj=root)
        self.manager.add_interface(MANAGER, {'Version': dbus.String(self.params['version'])}, [
            ('ScanDevices', [], [], lambda: None, False),
            ('SetLogging', [('level', 's')], [], self.set_logging, False),
            ('ReportKernelEvent', [('properties', 'a{sv}')], [], self.report_kernel_event, False),
            ('InhibitDevice', [('uid', 's'), ('inhibit', 'b')], [], self.inhibit_device, False),
        ])
        # Replaces dbusmock's, which would list every object under the path:
        # ModemManager's object manager holds the modems only (SMS, SIM and
        # bearer objects are exported beside it).
        export_method(root, OBJECT_MANAGER, 'GetManagedObjects', [],
                      [('object_paths_interfaces_and_properties', 'a{oa{sa{sv}}}')], self.get_managed_objects)
        controls = [
            ('SetSendDelay', [('seconds', 'd')], [], self.control_set_send_delay),
            ('FailNextSends', [('count', 'u'), ('error_name', 's'), ('message', 's')], [], self.control_fail_next_sends),
            ('SetHang', [('hang', 'b')], [], self.control_set_hang),
            ('SetDeliveryReports', [('delay', 'd'), ('delivery_state', 'u')], [], self.control_set_delivery_reports),
            ('AddModem', [], [('path', 'o')], self.control_add_modem),
            ('RemoveModem', [], [('path', 'o')], self.control_remove_modem),
            ('SetModemState', [('state', 'i')], [], self.control_set_modem_state),
            ('SetSignalQuality', [('percent', 'u')], [], self.control_set_signal_quality),
            ('ListModems', [], [('paths', 'ao')], self.control_list_modems),
            ('Sent', [], [('messages', 'a(ssdo)')], self.control_sent),
            ('SetCallTiming', [('ring_delay', 'd'), ('answer_delay', 'd'), ('remote_hangup_after', 'd')], [],
             self.control_set_call_timing),
            ('RemoteHangup', [], [('count', 'u')], self.control_remote_hangup),
            ('Calls', [], [('calls', 'a(soassdd)')], self.control_calls),
            ('SendLog', [('first', 'u')], [('calls', 'a(ossdd)')], self.control_send_log),
            ('GetStats', [], [('stats', 'a{sv}')], self.control_get_stats),
        ]
        for name, in_args, out_args, impl in controls:
            # Methods only, on an interface ModemManager does not have: not in
            # GetManagedObjects, nor in introspection.
            export_method(root, CONTROL, name, in_args, out_args, self._logged(name, impl))

        specs = parameters.get('modems', [{}])
        for spec in specs:
            self.modems.append(Modem(self, dict(spec)))
        # Nobody listens to a service that is only just starting.
        self.emitter.pending.clear()
        log(f'ModemManager simulator up: {len(self.modems)} modem(s), send_delay={self.params["send_delay"]}')

    def _logged(self, name, impl):
        def call(*args):
            def plain(value):
                if isinstance(value, float):
                    return float(value)
                return int(value) if isinstance(value, int) else str(value)
            log(f'control {name} {[plain(a) for a in args]}')
            return impl(*args)
        return call

    # Manager -------------------------------------------------------------------

    def get_managed_objects(self):
        return dbus.Dictionary({dbus.ObjectPath(m.path): m.node.interfaces() for m in self.modems},
                               signature='oa{sa{sv}}')

    def set_logging(self, level):
        if str(level).upper() not in LOG_LEVELS:
            raise core_error('InvalidArgs', f"Unknown logging level: '{level}'")
        self.logging = str(level).upper()

    def report_kernel_event(self, properties):
        raise core_error('Unsupported', 'Cannot report kernel event: udev monitoring enabled')

    def inhibit_device(self, uid, inhibit):
        raise core_error('NotFound', f"No device found with uid '{uid}'")

    def first_modem(self):
        if not self.modems:
            raise control_error('NoModem', 'no modem')
        return self.modems[0]

    # Controls ------------------------------------------------------------------

    def control_set_send_delay(self, seconds):
        '''SetSendDelay(d seconds): how long Sms.Send takes from now on.'''
        if seconds < 0:
            raise control_error('InvalidArguments', 'negative delay')
        self.params['send_delay'] = float(seconds)

    def control_fail_next_sends(self, count, error_name, message):
        '''FailNextSends(u count, s error_name, s message): the next `count`
        sends fail after the send delay with this D-Bus error; 0 clears what
        is left of an earlier injection.'''
        if count > 0 and (not error_name or '.' not in error_name):
            raise control_error('InvalidArguments', f'not an error name: {error_name!r}')
        self.failures = [(str(error_name), str(message))] * int(count)

    def control_set_hang(self, hang):
        '''SetHang(b): true: from now on Send never replies (the message stays
        SENDING). false: sends answer again (hung ones stay hung).'''
        self.hang = bool(hang)

    def control_set_delivery_reports(self, delay, delivery_state):
        '''SetDeliveryReports(d delay, u delivery_state): messages sent from
        now on that asked for a report get one `delay` s after SENT, with
        this MMSmsDeliveryState; a negative delay: never.'''
        self.params['report_delay'] = float(delay) if delay >= 0 else None
        self.params['report_state'] = int(delivery_state)

    def control_add_modem(self):
        '''AddModem() -> o: a new default modem, at the next index (as a
        modem plugged in again gets a new path in ModemManager).'''
        modem = Modem(self, {})
        self.modems.append(modem)
        self.stats['modems_added'] += 1
        self.emitter.signal(MAIN_OBJ, OBJECT_MANAGER, 'InterfacesAdded', 'oa{sa{sv}}',
                            [dbus.ObjectPath(modem.path), modem.node.interfaces()])
        return dbus.ObjectPath(modem.path)

    def control_remove_modem(self):
        '''RemoveModem() -> o: the lowest-numbered modem goes (unplugged).'''
        modem = self.first_modem()
        names = list(modem.node.obj.props)
        self.modems.remove(modem)
        self.hung = [h for h in self.hung if h[0].modem is not modem]
        modem.destroy()
        self.stats['modems_removed'] += 1
        self.emitter.signal(MAIN_OBJ, OBJECT_MANAGER, 'InterfacesRemoved', 'oas',
                            [dbus.ObjectPath(modem.path), strings(names)])
        return dbus.ObjectPath(modem.path)

    def control_set_modem_state(self, state):
        '''SetModemState(i MMModemState) of the lowest-numbered modem.'''
        if not MODEM_STATE_FAILED <= state <= MODEM_STATE_CONNECTED:
            raise control_error('InvalidArguments', f'not an MMModemState: {state}')
        self.first_modem().set_state(int(state))

    def control_set_signal_quality(self, percent):
        '''SetSignalQuality(u percent) of the lowest-numbered modem.'''
        if percent > 100:
            raise control_error('InvalidArguments', 'percent above 100')
        self.first_modem().node.set(MODEM, SignalQuality=dbus.Struct((dbus.UInt32(percent), dbus.Boolean(True)),
                                                                     signature='ub'))

    def control_list_modems(self):
        '''ListModems() -> ao'''
        return paths([m.path for m in self.modems])

    def control_sent(self):
        '''Sent() -> a(ssdo): (number, text, time, path) of every message
        that reached SENT, in order; time in seconds since the epoch.'''
        return dbus.Array([dbus.Struct((dbus.String(n), dbus.String(t), dbus.Double(at), dbus.ObjectPath(p)),
                                       signature='ssdo') for n, t, at, p in self.sent], signature='(ssdo)')

    def control_set_call_timing(self, ring_delay, answer_delay, remote_hangup_after):
        '''SetCallTiming(d ring_delay, d answer_delay, d remote_hangup_after):
        for calls started from now on; a negative answer_delay: never
        answered, a negative remote_hangup_after: never hung up remotely.'''
        if ring_delay < 0:
            raise control_error('InvalidArguments', 'negative ring delay')
        self.params['ring_delay'] = float(ring_delay)
        self.params['answer_delay'] = float(answer_delay) if answer_delay >= 0 else None
        self.params['remote_hangup_after'] = float(remote_hangup_after) if remote_hangup_after >= 0 else None

    def control_remote_hangup(self):
        '''RemoteHangup() -> u: the other end hangs up every call in progress;
        how many there were.'''
        return dbus.UInt32(sum(1 for m in self.modems for c in m.calls if c.remote_hangup()))

    def control_calls(self):
        '''Calls() -> a(soassdd): (number, path, states, ended_by, created,
        active_at) of every call ever created, in order; states by mmcli's
        names from "unknown"; ended_by "client" (Hangup), "remote", "removed"
        or "" (not ended); times in seconds since the epoch, active_at 0 if
        it never was.'''
        return dbus.Array([dbus.Struct((dbus.String(c['number']), dbus.ObjectPath(c['path']), strings(c['states']),
                                        dbus.String(c['ended_by']), dbus.Double(c['created']), dbus.Double(c['active_at'])),
                                       signature='soassdd') for c in self.calls], signature='(soassdd)')
    def control_send_log(self, first):
        '''SendLog(u first) -> a(ossdd): every Sms.Send call received (refused,
        failed and hung ones too), from the first-th on, in order: (path,
        number, text, created, received), created the message's Create and
        received the Send call's arrival, CLOCK_MONOTONIC seconds.'''
        return dbus.Array([dbus.Struct((dbus.ObjectPath(p), dbus.String(n), dbus.String(t), dbus.Double(c), dbus.Double(r)),
                                       signature='ossdd') for p, n, t, c, r in self.send_log[int(first):]],
                          signature='(ossdd)')

    def control_get_stats(self):
        '''GetStats() -> a{sv}: counters and settings (README.md).'''
        stats = {k: dbus.UInt32(v) for k, v in self.stats.items()}
        stats.update({
            'pending': dbus.UInt32(self.pending),
            'hanging': dbus.UInt32(len(self.hung)),
            'fail_remaining': dbus.UInt32(len(self.failures)),
            'modems': dbus.UInt32(len(self.modems)),
            'messages': dbus.UInt32(sum(len(m.messages) for m in self.modems)),
            'calls': dbus.UInt32(sum(len(m.calls) for m in self.modems)),
            'send_delay': dbus.Double(self.params['send_delay']),
            'report_delay': dbus.Double(-1 if self.params['report_delay'] is None else self.params['report_delay']),
            'hang': dbus.Boolean(self.hang),
            'logging': dbus.String(self.logging),
        })
        return dbus.Dictionary(stats, signature='sv')


def load(mock, parameters):
    '''dbusmock's entry point: `mock` is the object at /org/freedesktop/ModemManager1.'''
    global SIM
    SIM = Simulator(mock, parameters or {})
