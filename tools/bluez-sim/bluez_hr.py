# -*- coding: utf-8 -*-
'''Simulated bluetoothd (BlueZ 5.66) with heart-rate straps, for Pacer's tests.

A python-dbusmock template: run it on a private bus with Debian's Python,

    DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/x/bus \\
        /usr/bin/python3 -m dbusmock --system --template tools/bluez-sim/bluez_hr.py -p '{"straps": [...]}'

It owns org.bluez and exports what bluetoothd exports for one adapter (hci0) and
LE heart-rate straps: the ObjectManager at /, AgentManager1 and ProfileManager1
at /org/bluez, Adapter1 at /org/bluez/hci0, Device1 (and Battery1 while
connected) at /org/bluez/hci0/dev_XX_XX_XX_XX_XX_XX, and while connected the
GATT objects (GattService1, GattCharacteristic1, GattDescriptor1) below it,
with BlueZ's error names, property types, signals and their order. See
README.md beside this file for what is simulated and how faithfully.

Test controls are methods of org.pacer.BluezSim1 on /org/bluez (see the
docstrings of the functions named control_*; README.md lists them too).

Parameters (-p JSON object, all optional):
  straps            list of {"address", "name", "rssi" (-60), "battery" (85),
                    "in_range" (true), "paired" (true), "trusted" (= paired),
                    "address_type" ("random"), "icon" (none), "next_seq" (0),
                    "stream" ({"rate_hz", "bpm_values"}, none)}. Paired or
                    trusted straps are known to bluetoothd: their objects exist
                    from the start, disconnected, as after a bluetoothd restart;
                    the others appear when discovered. A "stream" runs from the
                    start (a strap that kept measuring while bluetoothd was down).
  adapter           {"address", "name", "powered" (true)}
  track_clients     true (BlueZ): discovery sessions, discovery filters and
                    notification sessions belong to the calling connection and
                    end when it leaves the bus. false: they are shared by all
                    callers and never end by themselves, so one-shot clients
                    (busctl, gdbus) can start one and stop it later.
  connect_delay     seconds from Connect to Connected=true (0.05)
  services_delay    seconds from Connected=true to the GATT objects (0.05)
  connect_timeout   seconds before Connect to a strap that is out of range
                    fails (1.0; a real LE connection attempt takes longer)
  refuse_delay      seconds before a refused Connect fails (0.1)
  advert_delay      seconds from discovery (or coming in range) to the
                    strap being seen (0.1)
  temporary_timeout seconds a discovered, unpaired, untrusted strap stays
                    after discovery stops or it disconnects (30, BlueZ's
                    TemporaryTimeout)
'''

import math
import re
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

BUS_NAME = 'org.bluez'
MAIN_OBJ = '/'
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

OBJECT_MANAGER = 'org.freedesktop.DBus.ObjectManager'
PROPERTIES = 'org.freedesktop.DBus.Properties'
INTROSPECTABLE = 'org.freedesktop.DBus.Introspectable'
AGENT_MANAGER = 'org.bluez.AgentManager1'
PROFILE_MANAGER = 'org.bluez.ProfileManager1'
ADAPTER = 'org.bluez.Adapter1'
GATT_MANAGER = 'org.bluez.GattManager1'
LE_ADVERTISING_MANAGER = 'org.bluez.LEAdvertisingManager1'
MEDIA = 'org.bluez.Media1'
NETWORK_SERVER = 'org.bluez.NetworkServer1'
DEVICE = 'org.bluez.Device1'
BATTERY = 'org.bluez.Battery1'
GATT_SERVICE = 'org.bluez.GattService1'
GATT_CHARACTERISTIC = 'org.bluez.GattCharacteristic1'
GATT_DESCRIPTOR = 'org.bluez.GattDescriptor1'
CONTROL = 'org.pacer.BluezSim1'
CONTROL_ERROR = 'org.pacer.BluezSim1.Error.'

ADAPTER_PATH = '/org/bluez/hci0'

# PlaySchedule: what each entry says about skin contact (2A37 flag bits 1-2) and
# what becomes of it. The played log's fates add SKIPPED (a measurement made
# while no client was connected and notifying).
CONTACT_FLAGS = {0: 0x00, 1: 0x06, 2: 0x04}  # not supported, detected, not detected
FATE_DELIVERED, FATE_LOST, FATE_SILENT, FATE_SKIPPED = 0, 1, 2, 3
# Entries the played log keeps per strap (older ones are dropped; indices go on).
PLAYED_KEEP = 100_000


def uuid16(short):
    return f'0000{short:04x}-0000-1000-8000-00805f9b34fb'


HEART_RATE = uuid16(0x180D)
BATTERY_SERVICE = uuid16(0x180F)
HR_MEASUREMENT = uuid16(0x2A37)
BATTERY_LEVEL = uuid16(0x2A19)
CCC = uuid16(0x2902)
# Heart-rate sensor (generic): category 0x0d. BlueZ 5.66 maps no icon to it.
APPEARANCE_HEART_RATE_SENSOR = 0x0341
# What a connected strap's GATT discovery finds; GAP (0x1800) is claimed by
# bluetoothd's gap plugin and never exported.
STRAP_UUIDS = [uuid16(0x1800), uuid16(0x1801), uuid16(0x180A), HEART_RATE, BATTERY_SERVICE]
# What an unknown strap advertises before it was ever connected.
ADVERTISED_UUIDS = [HEART_RATE]
ADDRESS_RE = re.compile(r'^([0-9A-F]{2}:){5}[0-9A-F]{2}$')

# The GATT database of a strap, by attribute handle as BlueZ names the objects
# (serviceXXXX = service declaration, charXXXX = characteristic declaration,
# descXXXX = descriptor). Values are byte lists; None = read from the strap.
GATT_LAYOUT = [
    (0x0008, uuid16(0x1801), [
        (0x0009, uuid16(0x2A05), ['indicate'], [], [0x000B]),
    ]),
    (0x000C, HEART_RATE, [
        (0x000D, HR_MEASUREMENT, ['notify'], [], [0x000F]),
    ]),
    (0x0010, BATTERY_SERVICE, [
        (0x0011, BATTERY_LEVEL, ['read', 'notify'], None, [0x0013]),
    ]),
    (0x0014, uuid16(0x180A), [
        (0x0015, uuid16(0x2A29), ['read'], list(b'Pacer Sim'), []),
        (0x0017, uuid16(0x2A24), ['read'], list(b'HR-1'), []),
    ]),
]

SIM = None


def log(message):
    '''One line on stdout (the fixture keeps it in a file).'''
    sys.stdout.write(f'{time.monotonic():.3f} {message}\n')
    sys.stdout.flush()


# --- D-Bus plumbing -------------------------------------------------------


def bluez_error(name, message):
    return dbus.exceptions.DBusException(message, name='org.bluez.Error.' + name)


def control_error(name, message):
    return dbus.exceptions.DBusException(message, name=CONTROL_ERROR + name)


def stream_arguments(rate_hz, bpm_values):
    '''StartStream's and PlayOnce's arguments, checked: (rate, values).'''
    if not 0 < float(rate_hz) <= 100:
        raise control_error('InvalidArguments', 'rate_hz must be in (0, 100]')
    values = [int(v) for v in bpm_values]
    if not values:
        raise control_error('InvalidArguments', 'bpm_values is empty')
    return float(rate_hz), values


def export_method(obj, interface, name, in_sig, out_sig, impl, asynchronous=False, sender=False):
    '''Adds method `name` to one object: dbus-python calls it through dbusmock's
    per-object method table, so it neither logs nor emits dbusmock's
    MethodCalled signal (bluetoothd sends no such thing).'''
    def method(_self, *args, **keywords):
        return impl(*args, **keywords)
    method.__name__ = name
    method._dbus_is_method = True
    method._dbus_interface = interface
    method._dbus_in_signature = in_sig
    method._dbus_out_signature = out_sig
    method._dbus_async_callbacks = ('reply', 'error') if asynchronous else None
    method._dbus_sender_keyword = 'sender' if sender else None
    for keyword in ('path', 'rel_path', 'destination', 'message', 'connection'):
        setattr(method, f'_dbus_{keyword}_keyword', None)
    method._dbus_args = [f'arg{i}' for i in range(len(list(dbus.Signature(in_sig))))]
    method._dbus_get_args_options = {'byte_arrays': False}
    obj.methods.setdefault(interface, {})[name] = (in_sig, out_sig, '', method)


def as_array(items, signature):
    return dbus.Array(items, signature=signature)


def as_bytes(values):
    return dbus.Array([dbus.Byte(v) for v in values], signature='y')


class Emitter:
    '''Signals go out from an idle callback, after the method reply, as
    bluetoothd's gdbus layer sends them. Changes of different properties of
    one interface coalesce into one PropertiesChanged until something else
    happens to the same object; a second change of the same property starts a
    new signal (bluetoothd's asynchronous kernel round trips keep such
    transitions apart). Notifications (`now`) flush what is pending and go at
    once.'''

    def __init__(self, connection):
        self.connection = connection
        self.queue = []
        self.source = None

    def _schedule(self):
        if self.source is None:
            self.source = GLib.idle_add(self._idle)

    def _idle(self):
        self.source = None
        self.flush()
        return False

    def _last_for(self, path):
        for event in reversed(self.queue):
            if event[1] == path:
                return event
        return None

    def properties(self, path, interface, changed, invalidated=()):
        last = self._last_for(path)
        touched = set(changed) | set(invalidated)
        if (last is not None and last[0] == 'props' and last[2] == interface
                and not touched & (set(last[3]) | set(last[4]))):
            for name, value in changed.items():
                last[3][name] = value
                if name in last[4]:
                    last[4].remove(name)
            for name in invalidated:
                last[3].pop(name, None)
                if name not in last[4]:
                    last[4].append(name)
        else:
            self.queue.append(['props', path, interface, dict(changed), list(invalidated)])
        self._schedule()

    def added(self, path, interfaces):
        snapshot = dbus.Dictionary(
            {name: dbus.Dictionary(dict(props), signature='sv') for name, props in interfaces.items()},
            signature='sa{sv}')
        self.queue.append(['added', path, snapshot])
        self._schedule()

    def removed(self, path, names):
        last = self._last_for(path)
        if last is not None and last[0] == 'added' and all(n in last[2] for n in names):
            # Added and removed before anyone heard of it: nothing to say.
            for name in names:
                del last[2][name]
            if not last[2]:
                self.queue.remove(last)
            return
        self.queue.append(['removed', path, list(names)])
        self._schedule()

    def flush(self):
        if self.source is not None:
            GLib.source_remove(self.source)
            self.source = None
        queue, self.queue = self.queue, []
        for event in queue:
            kind, path = event[0], event[1]
            if kind == 'props':
                self._send(path, PROPERTIES, 'PropertiesChanged', 'sa{sv}as', [
                    event[2], dbus.Dictionary(event[3], signature='sv'), as_array(event[4], 's')])
            elif kind == 'added':
                self._send('/', OBJECT_MANAGER, 'InterfacesAdded', 'oa{sa{sv}}',
                           [dbus.ObjectPath(path), event[2]])
            else:
                self._send('/', OBJECT_MANAGER, 'InterfacesRemoved', 'oas',
                           [dbus.ObjectPath(path), as_array(event[2], 's')])
        return False

    def now(self, path, interface, changed):
        self.flush()
        self._send(path, PROPERTIES, 'PropertiesChanged', 'sa{sv}as', [
            interface, dbus.Dictionary(changed, signature='sv'), as_array([], 's')])

    def _send(self, path, interface, member, signature, args):
        message = dbus.lowlevel.SignalMessage(path, interface, member)
        message.append(*args, signature=signature)
        self.connection.send_message(message)


class Node(PropertyTable):
    '''One exported object: interfaces in registration order (Introspectable and
    Properties first, as bluetoothd's gdbus registers them), each with its
    properties, and Properties.Get/GetAll/Set answering as bluetoothd does.'''

    def __init__(self, sim, path, writable=None, optional=()):
        self.sim = sim
        self.path = path
        # interface -> {property: (signature, setter)}
        self.writable = writable or {}
        # Properties that bluetoothd knows but that may be absent (RSSI, Icon…).
        self.optional = set(optional)
        sim.root.AddObject(path, INTROSPECTABLE, {}, [])
        self.obj = mockobject.objects[path]
        self.obj.props = {INTROSPECTABLE: {}, PROPERTIES: {}}
        export_method(self.obj, PROPERTIES, 'Get', 'ss', 'v', self._get)
        export_method(self.obj, PROPERTIES, 'GetAll', 's', 'a{sv}', self._get_all)
        export_method(self.obj, PROPERTIES, 'Set', 'ssv', '', self._set)

    @property
    def interfaces(self):
        return self.obj.props

    def add_interface(self, interface, props, methods=(), announce=True):
        self.obj.props[interface] = dict(props)
        for name, in_sig, out_sig, impl, options in methods:
            export_method(self.obj, interface, name, in_sig, out_sig, impl, **options)
        if announce:
            self.sim.emitter.added(self.path, {interface: self.obj.props[interface]})

    def remove_interface(self, interface):
        if interface in self.obj.props:
            del self.obj.props[interface]
            self.obj.methods.pop(interface, None)
            self.sim.emitter.removed(self.path, [interface])

    def announce(self):
        self.sim.emitter.added(self.path, self.obj.props)

    def destroy(self):
        names = [PROPERTIES, INTROSPECTABLE] + [n for n in self.obj.props if n not in (PROPERTIES, INTROSPECTABLE)]
        self.sim.root.RemoveObject(self.path)
        self.sim.emitter.removed(self.path, names)

    def get(self, interface, name, default=None):
        return self.obj.props.get(interface, {}).get(name, default)

    def set(self, interface, **changes):
        '''Sets properties, announcing those whose value changed.'''
        props = self.obj.props[interface]
        changed = {k: v for k, v in changes.items() if k not in props or props[k] != v
                   or type(props[k]) is not type(v)}
        props.update(changed)
        if changed:
            self.sim.emitter.properties(self.path, interface, changed)

    def invalidate(self, interface, name):
        props = self.obj.props.get(interface, {})
        if name in props:
            del props[name]
            self.sim.emitter.properties(self.path, interface, {}, [name])

    def _set(self, interface, name, value):
        self._require_interface(interface)
        known = name in self.obj.props[interface] or name in self.optional
        if not known:
            raise dbus_error('UnknownProperty', f"No such property '{name}'")
        setter = self.writable.get(interface, {}).get(name)
        if setter is None:
            raise dbus_error('PropertyReadOnly', f"Property '{name}' is not writable")
        signature, apply = setter
        expected = {'b': dbus.Boolean, 's': dbus.String, 'u': dbus.UInt32}[signature]
        if not isinstance(value, expected):
            raise bluez_error('InvalidArguments', 'Invalid arguments in method call')
        apply(value)


def later(seconds, callback, *args):
    '''A one-shot GLib timeout; returns its source id.'''
    def fire():
        callback(*args)
        return False
    return GLib.timeout_add(max(0, int(round(seconds * 1000))), fire)


def cancel(source):
    if source is not None:
        GLib.source_remove(source)


# --- Sessions owned by bus clients -------------------------------------------


class Clients:
    '''Who holds what. With track_clients, a session belongs to the caller's
    unique name and ends when that name leaves the bus (bluetoothd watches
    its clients the same way); without, every caller is the same client.'''

    def __init__(self, sim, track):
        self.sim = sim
        self.track = track
        self.watches = {}

    def key(self, sender):
        return sender if self.track else '*'

    def watch(self, key):
        if not self.track or key in self.watches:
            return

        def owner_changed(new_owner):
            if new_owner == '' and key in self.watches:
                self.watches.pop(key).cancel()
                log(f'client {key} left the bus')
                self.sim.client_gone(key)
        self.watches[key] = self.sim.connection.watch_name_owner(key, owner_changed)


# --- Straps ------------------------------------------------------------------


class Characteristic:
    def __init__(self, node, uuid, flags, value):
        self.node = node
        self.uuid = uuid
        self.flags = flags
        self.value = value
        self.sessions = set()


class Pending:
    '''A Connect or Pair in flight: its reply callbacks, its phase
    ('refusing', 'waiting' for the strap to come in range, 'linking',
    'resolving' services) and the timer that ends the phase.'''

    def __init__(self, kind, reply, error):
        self.kind = kind
        self.reply = reply
        self.error = error
        self.timer = None
        self.phase = None

    def next(self, phase, seconds, callback, *args):
        cancel(self.timer)
        self.phase = phase
        self.timer = later(seconds, callback, *args)


class Strap:
    def __init__(self, sim, spec):
        self.sim = sim
        self.address = normalise_address(spec['address'])
        self.name = str(spec.get('name', 'HR strap'))
        self.rssi = int(spec.get('rssi', -60))
        self.battery = int(spec.get('battery', 85))
        self.in_range = bool(spec.get('in_range', True))
        self.paired = bool(spec.get('paired', False))
        self.trusted = bool(spec.get('trusted', self.paired))
        self.address_type = str(spec.get('address_type', 'random'))
        self.icon = spec.get('icon')
        # A strap bluetoothd knows has its services stored; an unknown one only
        # advertises the heart-rate service.
        self.uuids = list(STRAP_UUIDS if self.paired else ADVERTISED_UUIDS)
        self.path = f'{ADAPTER_PATH}/dev_{self.address.replace(":", "_")}'
        self.node = None
        self.discovered = False
        # A device bluetoothd only saw advertising; Connect or Pair makes it
        # permanent (device_set_temporary(false) in BlueZ).
        self.temporary = True
        self.advert_timer = None
        self.temporary_timer = None
        self.connected = False
        self.resolved = False
        self.pending = None
        self.gatt = []
        self.chars = {}
        self.refuse_remaining = 0
        self.refuse_error = ('org.bluez.Error.Failed', 'le-connection-abort-by-local')
        self.stream = None
        # The strap's measurement counter; a restarted simulator is told where
        # it had got to, so numbers never repeat.
        self.next_seq = int(spec.get('next_seq', 0))
        self.stats = dict(sent=0, stream_sent=0, raw_sent=0, skipped=0, lost=0, connects=0,
                          connect_calls=0, refused=0, disconnects=0)
        # Every measurement's fate with its due and actual CLOCK_MONOTONIC times
        # (Played); `played_base` is the index of played[0].
        self.played = []
        self.played_base = 0

    # Device object -----------------------------------------------------------

    def device_props(self):
        props = {
            'Address': dbus.String(self.address),
            'AddressType': dbus.String(self.address_type),
            'Name': dbus.String(self.name),
            'Alias': dbus.String(self.name),
            'Appearance': dbus.UInt16(APPEARANCE_HEART_RATE_SENSOR),
        }
        if self.icon:
            props['Icon'] = dbus.String(self.icon)
        props.update({
            'Paired': dbus.Boolean(self.paired),
            'Bonded': dbus.Boolean(self.paired),
            'Trusted': dbus.Boolean(self.trusted),
            'Blocked': dbus.Boolean(False),
            'LegacyPairing': dbus.Boolean(False),
        })
        if self.discovered:
            props['RSSI'] = dbus.Int16(self.rssi)
        props.update({
            'Connected': dbus.Boolean(self.connected),
            'UUIDs': as_array(self.uuids, 's'),
            'Adapter': dbus.ObjectPath(ADAPTER_PATH),
            'ServicesResolved': dbus.Boolean(self.resolved),
        })
        return props

    def export(self):
        sim = self.sim
        self.node = Node(sim, self.path, writable={DEVICE: {
            'Alias': ('s', self._set_alias),
            'Trusted': ('b', self._set_trusted),
            'Blocked': ('b', self._set_blocked),
        }}, optional=('RSSI', 'Icon', 'Class', 'Modalias', 'TxPower', 'ManufacturerData',
                      'ServiceData', 'AdvertisingFlags', 'AdvertisingData', 'WakeAllowed'))
        self.node.add_interface(DEVICE, self.device_props(), [
            ('Connect', '', '', self.dbus_connect, dict(asynchronous=True)),
            ('Disconnect', '', '', self.dbus_disconnect, dict(asynchronous=True)),
            ('ConnectProfile', 's', '', self.dbus_connect_profile, {}),
            ('DisconnectProfile', 's', '', self.dbus_disconnect_profile, {}),
            ('Pair', '', '', self.dbus_pair, dict(asynchronous=True)),
            ('CancelPairing', '', '', self.dbus_cancel_pairing, {}),
        ], announce=False)
        self.node.announce()
        log(f'{self.address}: device object exported')

    def unexport(self):
        '''The device object goes (RemoveDevice, RemoveStrap, temporary timeout).'''
        self.cancel_pending('org.bluez.Error.Failed', 'le-connection-abort-by-local')
        if self.connected:
            self.link_down('removed')
        cancel(self.temporary_timer)
        self.temporary_timer = None
        cancel(self.advert_timer)
        self.advert_timer = None
        if self.node is not None:
            self.node.destroy()
            self.node = None
            log(f'{self.address}: device object removed')
        self.discovered = False
        self.temporary = True

    def is_temporary(self):
        return (self.temporary and not self.paired and not self.trusted and not self.connected
                and self.pending is None)

    def schedule_temporary_removal(self):
        cancel(self.temporary_timer)
        self.temporary_timer = None
        if self.node is not None and self.is_temporary():
            self.temporary_timer = later(self.sim.params['temporary_timeout'], self._temporary_expired)

    def _temporary_expired(self):
        self.temporary_timer = None
        if self.node is None or not self.is_temporary():
            return
        if self.discovered:
            self.schedule_temporary_removal()
            return
        log(f'{self.address}: temporary device expired')
        self.unexport()

    def _set_alias(self, value):
        self.node.set(DEVICE, Alias=dbus.String(value or self.name))

    def _set_trusted(self, value):
        self.trusted = bool(value)
        self.node.set(DEVICE, Trusted=dbus.Boolean(self.trusted))
        if not self.trusted:
            self.schedule_temporary_removal()

    def _set_blocked(self, value):
        self.node.set(DEVICE, Blocked=dbus.Boolean(bool(value)))
        if value:
            self.cancel_pending('org.bluez.Error.Failed', 'le-connection-abort-by-local')
            if self.connected:
                self.link_down('blocked')

    @property
    def blocked(self):
        return self.node is not None and bool(self.node.get(DEVICE, 'Blocked', False))

    # Discovery ---------------------------------------------------------------

    def seen(self):
        '''An advertisement arrived while discovering.'''
        self.advert_timer = None
        if not self.sim.visible(self):
            return
        cancel(self.temporary_timer)
        self.temporary_timer = None
        if self.node is None:
            self.discovered = True
            self.export()
        else:
            self.discovered = True
            self.node.set(DEVICE, RSSI=dbus.Int16(self.rssi))

    def discovery_ended(self):
        cancel(self.advert_timer)
        self.advert_timer = None
        if self.discovered:
            self.discovered = False
            if self.node is not None:
                self.node.invalidate(DEVICE, 'RSSI')
            self.schedule_temporary_removal()

    # Connection --------------------------------------------------------------

    def dbus_connect(self, reply, error):
        self.start_connect('connect', reply, error)

    def dbus_pair(self, reply, error):
        if self.paired:
            raise bluez_error('AlreadyExists', 'Already Exists')
        if self.connected and self.pending is None:
            # Already linked: only SMP runs.
            def paired():
                self.set_paired()
                reply()
            later(0.02, paired)
            return
        self.start_connect('pair', reply, error)

    def start_connect(self, kind, reply, error):
        sim = self.sim
        if not sim.powered:
            raise bluez_error('NotReady', 'Resource Not Ready')
        if self.pending is not None:
            raise bluez_error('InProgress', 'In Progress')
        if self.connected and kind == 'connect':
            reply()
            return
        self.stats['connect_calls'] += 1
        self.temporary = False
        pending = Pending(kind, reply, error)
        self.pending = pending
        cancel(self.temporary_timer)
        self.temporary_timer = None
        params = sim.params
        if self.refuse_remaining > 0:
            self.refuse_remaining -= 1
            name, message = self.refuse_error
            if kind == 'pair' and name == 'org.bluez.Error.Failed':
                name, message = 'org.bluez.Error.ConnectionAttemptFailed', 'Page Timeout'
            log(f'{self.address}: refusing {kind} ({self.refuse_remaining} more to refuse)')
            pending.next('refusing', params['refuse_delay'], self.fail_pending, pending, name, message)
        elif not self.in_range or self.blocked:
            self.wait_for_range(pending)
        else:
            pending.next('linking', params['connect_delay'], self.link_up, pending)

    def wait_for_range(self, pending):
        '''The controller keeps trying until the attempt times out; a strap
        that comes in range meanwhile is connected (see came_in_range).'''
        name, message = ('org.bluez.Error.Failed', 'le-connection-abort-by-local')
        if pending.kind == 'pair':
            name, message = 'org.bluez.Error.ConnectionAttemptFailed', 'Page Timeout'
        pending.next('waiting', self.sim.params['connect_timeout'], self.fail_pending, pending, name, message)

    def fail_pending(self, pending, name, message):
        if self.pending is not pending:
            return
        self.pending = None
        self.stats['refused'] += 1
        log(f'{self.address}: {pending.kind} failed: {name}: {message}')
        pending.error(dbus.exceptions.DBusException(message, name=name))
        self.schedule_temporary_removal()

    def cancel_pending(self, name, message):
        pending = self.pending
        if pending is None:
            return
        cancel(pending.timer)
        pending.timer = None
        self.fail_pending(pending, name, message)

    def came_in_range(self):
        pending = self.pending
        if pending is not None and pending.phase == 'waiting' and not self.blocked:
            pending.next('linking', self.sim.params['connect_delay'], self.link_up, pending)

    def went_out_of_range(self):
        if self.connected:
            self.link_down('out of range')
        elif self.pending is not None and self.pending.phase == 'linking':
            self.wait_for_range(self.pending)

    def link_up(self, pending):
        if self.pending is not pending:
            return
        pending.timer = None
        self.connected = True
        self.stats['connects'] += 1
        log(f'{self.address}: connected')
        self.node.set(DEVICE, Connected=dbus.Boolean(True))
        pending.next('resolving', self.sim.params['services_delay'], self.services_found, pending)

    def services_found(self, pending):
        if self.pending is not pending or not self.connected:
            return
        pending.timer = None
        self.add_gatt()
        if pending.kind == 'pair':
            self.set_paired()
        if self.uuids != STRAP_UUIDS:
            self.uuids = list(STRAP_UUIDS)
            self.node.set(DEVICE, UUIDs=as_array(self.uuids, 's'))
        # The GATT objects are announced first; bluetoothd replies to Connect
        # as soon as services are resolved and announces ServicesResolved from
        # its idle handler, so the reply comes before that signal.
        self.sim.emitter.flush()
        self.resolved = True
        self.node.set(DEVICE, ServicesResolved=dbus.Boolean(True))
        self.pending = None
        pending.reply()
        # The battery plugin reads the level and enables notifications first.
        later(0.02, self.add_battery)

    def set_paired(self):
        self.paired = True
        self.node.set(DEVICE, Paired=dbus.Boolean(True), Bonded=dbus.Boolean(True))
        cancel(self.temporary_timer)
        self.temporary_timer = None

    def add_battery(self):
        if self.connected and self.resolved and self.node is not None and BATTERY not in self.node.interfaces:
            self.node.add_interface(BATTERY, {
                'Percentage': dbus.Byte(self.battery),
                'Source': dbus.String('GATT Battery Service'),
            })

    def add_gatt(self):
        for service_handle, service_uuid, characteristics in GATT_LAYOUT:
            service_path = f'{self.path}/service{service_handle:04x}'
            service = Node(self.sim, service_path)
            service.add_interface(GATT_SERVICE, {
                'UUID': dbus.String(service_uuid),
                'Device': dbus.ObjectPath(self.path),
                'Primary': dbus.Boolean(True),
                'Includes': as_array([], 'o'),
                'Handle': dbus.UInt16(service_handle),
            }, announce=False)
            service.announce()
            self.gatt.append(service)
            for char_handle, char_uuid, flags, value, descriptors in characteristics:
                char_path = f'{service_path}/char{char_handle:04x}'
                char = Node(self.sim, char_path)
                props = {
                    'UUID': dbus.String(char_uuid),
                    'Service': dbus.ObjectPath(service_path),
                    'Value': as_bytes([]),
                    'Notifying': dbus.Boolean(False),
                    'Flags': as_array(flags, 's'),
                    'Handle': dbus.UInt16(char_handle + 1),
                    'MTU': dbus.UInt16(23),
                }
                if 'notify' in flags or 'indicate' in flags:
                    props['NotifyAcquired'] = dbus.Boolean(False)
                else:
                    del props['Notifying']
                content = value if value is not None else [self.battery]
                model = Characteristic(char, char_uuid, flags, content)
                options = dict(asynchronous=True, sender=True)
                char.add_interface(GATT_CHARACTERISTIC, props, [
                    ('ReadValue', 'a{sv}', 'ay', lambda options, reply, error, sender, m=model:
                        self.read_value(m, reply, error), dict(asynchronous=True, sender=True)),
                    ('WriteValue', 'aya{sv}', '', lambda value, options, m=model:
                        self.write_value(m), {}),
                    ('StartNotify', '', '', lambda reply, error, sender, m=model:
                        self.start_notify(m, sender, reply), options),
                    ('StopNotify', '', '', lambda reply, error, sender, m=model:
                        self.stop_notify(m, sender, reply), options),
                ], announce=False)
                char.announce()
                self.gatt.append(char)
                self.chars[char_uuid] = model
                for descriptor_handle in descriptors:
                    descriptor = Node(self.sim, f'{char_path}/desc{descriptor_handle:04x}')
                    descriptor.add_interface(GATT_DESCRIPTOR, {
                        'UUID': dbus.String(CCC),
                        'Characteristic': dbus.ObjectPath(char_path),
                        'Value': as_bytes([]),
                        'Handle': dbus.UInt16(descriptor_handle),
                    }, [
                        ('ReadValue', 'a{sv}', 'ay', lambda options, m=model:
                            as_bytes([1 if m.sessions else 0, 0]), {}),
                        ('WriteValue', 'aya{sv}', '', self.write_descriptor, {}),
                    ], announce=False)
                    descriptor.announce()
                    self.gatt.append(descriptor)

    def write_descriptor(self, value, options):
        # bluetoothd refuses writes to the CCC: StartNotify is the way.
        raise bluez_error('NotPermitted', 'Write not permitted')

    def link_down(self, reason):
        '''The LE link is gone: ServicesResolved and Connected go false, the GATT
        objects and Battery1 go (a strap that is not bonded keeps no cache).'''
        if not self.connected:
            return
        log(f'{self.address}: disconnected ({reason})')
        pending = self.pending
        self.connected = False
        self.resolved = False
        self.stats['disconnects'] += 1
        changes = {}
        if self.node.get(DEVICE, 'ServicesResolved'):
            changes['ServicesResolved'] = dbus.Boolean(False)
        changes['Connected'] = dbus.Boolean(False)
        self.node.set(DEVICE, **changes)
        for node in reversed(self.gatt):
            node.destroy()
        self.gatt = []
        self.chars = {}
        self.node.remove_interface(BATTERY)
        if pending is not None:
            cancel(pending.timer)
            pending.timer = None
            self.fail_pending(pending, 'org.bluez.Error.Failed', 'le-connection-abort-by-remote')
        self.schedule_temporary_removal()
        if self.sim.discovering:
            self.sim.rescan()

    def dbus_disconnect(self, reply, error):
        if self.pending is not None:
            self.cancel_pending('org.bluez.Error.Failed', 'le-connection-abort-by-local')
            if self.connected:
                self.link_down('local')
            reply()
            return
        if not self.connected:
            raise bluez_error('NotConnected', 'Not Connected')
        self.link_down('local')
        reply()

    def dbus_connect_profile(self, uuid):
        raise bluez_error('NotAvailable', 'Operation currently not available')

    def dbus_disconnect_profile(self, uuid):
        raise bluez_error('NotAvailable', 'Operation currently not available')

    def dbus_cancel_pairing(self):
        pending = self.pending
        if pending is None or pending.kind != 'pair':
            raise bluez_error('DoesNotExist', 'Does Not Exist')
        cancel(pending.timer)
        pending.timer = None
        if self.connected:
            self.link_down('pairing cancelled')
        self.fail_pending(pending, 'org.bluez.Error.AuthenticationCanceled', 'Authentication Canceled')

    # GATT --------------------------------------------------------------------

    def read_value(self, model, reply, error):
        if 'read' not in model.flags:
            error(bluez_error('NotPermitted', 'Read not permitted'))
            return
        if model.uuid == BATTERY_LEVEL:
            model.value = [self.battery]
        model.node.set(GATT_CHARACTERISTIC, Value=as_bytes(model.value))
        reply(as_bytes(model.value))

    def write_value(self, model):
        raise bluez_error('NotPermitted', 'Write not permitted')

    def start_notify(self, model, sender, reply):
        clients = self.sim.clients
        key = clients.key(sender)
        if key not in model.sessions:
            model.sessions.add(key)
            clients.watch(key)
            model.node.set(GATT_CHARACTERISTIC, Notifying=dbus.Boolean(True))
            log(f'{self.address}: notifications on {model.uuid[4:8]} for {key}')
        reply()

    def stop_notify(self, model, sender, reply):
        key = self.sim.clients.key(sender)
        if key not in model.sessions:
            raise bluez_error('Failed', 'No notify session started')
        model.sessions.discard(key)
        if not model.sessions:
            model.node.set(GATT_CHARACTERISTIC, Notifying=dbus.Boolean(False))
            log(f'{self.address}: notifications off on {model.uuid[4:8]}')
        reply()

    def client_gone(self, key):
        for model in self.chars.values():
            if key in model.sessions:
                model.sessions.discard(key)
                if not model.sessions:
                    model.node.set(GATT_CHARACTERISTIC, Notifying=dbus.Boolean(False))

    def notifying(self, uuid):
        model = self.chars.get(uuid)
        return self.connected and self.resolved and model is not None and bool(model.sessions)

    def notify(self, uuid, value):
        model = self.chars[uuid]
        model.value = list(value)
        model.node.obj.props[GATT_CHARACTERISTIC]['Value'] = as_bytes(value)
        self.sim.emitter.now(model.node.path, GATT_CHARACTERISTIC, {'Value': as_bytes(value)})
        self.stats['sent'] += 1

    def set_battery(self, percent):
        self.battery = percent
        if not self.connected:
            return
        if BATTERY in self.node.interfaces:
            self.node.set(BATTERY, Percentage=dbus.Byte(percent))
        model = self.chars.get(BATTERY_LEVEL)
        if model is not None:
            if model.sessions:
                self.notify(BATTERY_LEVEL, [percent])
            else:
                model.value = [percent]

    # Heart-rate stream -------------------------------------------------------

    def start_stream(self, rate_hz, bpm_values, once=False):
        self.stop_stream()
        self.stream = Stream(self, rate_hz, bpm_values, once)

    def stop_stream(self):
        if self.stream is not None:
            self.stream.stop()
            self.stream = None

    def stream_tick(self, bpm, contact=0, fate=FATE_DELIVERED, due=None):
        '''One measurement the strap makes: it takes the next sequence number
        and reaches the client only while connected and notifying. A lost one
        (a schedule's radio loss) takes its number and is never sent; a silent
        one is no measurement at all (no number), only logged.'''
        if fate == FATE_SILENT:
            self.log_played(due, time.monotonic(), -1, bpm, 0, FATE_SILENT)
            return
        seq = self.next_seq
        self.next_seq += 1
        flags = 0x10 | CONTACT_FLAGS[contact]
        if bpm <= 0xFF:
            value = [flags, bpm, seq & 0xFF, (seq >> 8) & 0xFF]
        else:
            # A rate that does not fit in a byte needs the 16-bit format.
            value = [flags | 0x01, bpm & 0xFF, bpm >> 8, seq & 0xFF, (seq >> 8) & 0xFF]
        if fate == FATE_LOST:
            self.stats['skipped'] += 1
            self.stats['lost'] += 1
            at = time.monotonic()
        elif self.notifying(HR_MEASUREMENT):
            # Stamped as it goes to the bus: the send time a latency is measured from.
            at = time.monotonic()
            self.notify(HR_MEASUREMENT, value)
            self.stats['stream_sent'] += 1
        else:
            self.stats['skipped'] += 1
            fate = FATE_SKIPPED
            at = time.monotonic()
        self.log_played(due, at, seq, bpm, value[0], fate)

    def log_played(self, due, at, seq, bpm, flags, fate):
        self.played.append((at if due is None else due, at, seq, bpm, flags, fate))
        if len(self.played) > PLAYED_KEEP:
            drop = len(self.played) - PLAYED_KEEP
            del self.played[:drop]
            self.played_base += drop


class Stream:
    '''Ticks at absolute times t0 + k/rate on the monotonic clock (GLib's, in
    microseconds), so timer latency never accumulates into drift; ticks that a
    stalled main loop missed are made up at once, in order. A stream played
    once gives each value in turn and then ends; otherwise it cycles, value
    seq % n, for ever.'''

    def __init__(self, strap, rate_hz, bpm_values, once=False):
        self.strap = strap
        self.rate = rate_hz
        self.bpm_values = bpm_values
        self.once = once
        self.start = GLib.get_monotonic_time()
        self.ticks = 0
        self.source = None
        self._arm()

    def deadline(self, tick):
        return self.start + int(round(tick * 1_000_000 / self.rate))

    def _arm(self):
        wait = self.deadline(self.ticks + 1) - GLib.get_monotonic_time()
        # Rounded up: GLib never fires early, so the tick is not taken late
        # by one whole period.
        self.source = GLib.timeout_add(max(0, math.ceil(wait / 1000)), self._fire,
                                       priority=GLib.PRIORITY_HIGH)

    def _fire(self):
        self.source = None
        now = GLib.get_monotonic_time()
        made = 0
        while self.deadline(self.ticks + 1) <= now + 500 and made < 10_000:
            self.ticks += 1
            made += 1
            self.measure(self.ticks)
            if self.strap.stream is not self:
                return False
            if self.once and self.ticks == len(self.bpm_values):
                self.strap.stream = None
                return False
        self._arm()
        return False

    def measure(self, tick):
        if self.once:
            bpm = self.bpm_values[tick - 1]
        else:
            bpm = self.bpm_values[self.strap.next_seq % len(self.bpm_values)]
        self.strap.stream_tick(bpm, due=self.deadline(tick) / 1e6)

    def stop(self):
        cancel(self.source)
        self.source = None


class Schedule(Stream):
    '''PlaySchedule: entries (at_s, bpm, contact, fate) each measured at its own
    offset from the start, on the same absolute clock as a stream, then ends.'''

    def __init__(self, strap, entries):
        self.entries = entries
        super().__init__(strap, 0.0, [e[1] for e in entries], once=True)

    def deadline(self, tick):
        return self.start + int(round(self.entries[tick - 1][0] * 1_000_000)) if tick > 0 else self.start

    def measure(self, tick):
        at_s, bpm, contact, fate = self.entries[tick - 1]
        self.strap.stream_tick(bpm, contact, fate, due=self.deadline(tick) / 1e6)


# --- The simulator -------------------------------------------------------------


def normalise_address(address):
    address = str(address).upper()
    if not ADDRESS_RE.match(address):
        raise control_error('InvalidArguments', f'not a Bluetooth address: {address!r}')
    return address


def expand_uuid(value):
    value = str(value).lower()
    if re.fullmatch(r'[0-9a-f]{4}', value):
        return f'0000{value}-0000-1000-8000-00805f9b34fb'
    if re.fullmatch(r'[0-9a-f]{8}', value):
        return f'{value}-0000-1000-8000-00805f9b34fb'
    if re.fullmatch(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', value):
        return value
    raise bluez_error('InvalidArguments', 'Invalid arguments in method call')


DEFAULTS = {
    'track_clients': True,
    'connect_delay': 0.05,
    'services_delay': 0.05,
    'connect_timeout': 1.0,
    'refuse_delay': 0.1,
    'advert_delay': 0.1,
    'temporary_timeout': 30.0,
}


class Simulator(SimulatorBase):
    def __init__(self, root, parameters):
        super().__init__(root, parameters, DEFAULTS)
        self.emitter = Emitter(self.connection)
        self.clients = Clients(self, bool(self.params['track_clients']))
        adapter = parameters.get('adapter', {})
        self.adapter_address = normalise_address(adapter.get('address', 'B8:27:EB:5A:C3:01'))
        self.adapter_name = str(adapter.get('name', 'pacer'))
        self.powered = bool(adapter.get('powered', True))
        self.discovery = {}   # client key -> True while it discovers
        self.filters = {}     # client key -> filter dict
        self.straps = {}

        # Replaces dbusmock's, which lists stored properties without
        # bluetoothd's interface order.
        export_method(root, OBJECT_MANAGER, 'GetManagedObjects', '', 'a{oa{sa{sv}}}',
                      self.get_managed_objects)
        self.bluez = self._make_bluez()
        self.adapter = self._make_adapter()
        for spec in parameters.get('straps', []):
            spec = dict(spec)
            spec.setdefault('paired', True)
            strap = Strap(self, spec)
            if strap.address in self.straps:
                raise ValueError(f'strap {strap.address} given twice')
            self.straps[strap.address] = strap
            if strap.paired or strap.trusted:
                strap.export()
            stream = spec.get('stream')
            if stream:
                strap.start_stream(float(stream['rate_hz']), [int(v) for v in stream['bpm_values']])
        # Nobody listens to a service that is only just starting.
        self.emitter.queue.clear()
        log(f'bluetoothd simulator up: {len(self.straps)} strap(s), '
            f'track_clients={self.clients.track}')

    # Objects -------------------------------------------------------------------

    def get_managed_objects(self):
        result = dbus.Dictionary(signature='oa{sa{sv}}')
        for path in sorted(mockobject.objects):
            if path == '/':
                continue
            obj = mockobject.objects[path]
            result[dbus.ObjectPath(path)] = dbus.Dictionary(
                {name: dbus.Dictionary(props, signature='sv') for name, props in obj.props.items()},
                signature='sa{sv}')
        return result

    def _make_bluez(self):
        node = Node(self, '/org/bluez')
        # No properties on /org/bluez: bluetoothd registers no Properties there.
        del node.obj.props[PROPERTIES]
        node.add_interface(AGENT_MANAGER, {}, [
            ('RegisterAgent', 'os', '', lambda path, capability: None, {}),
            ('UnregisterAgent', 'o', '', lambda path: None, {}),
            ('RequestDefaultAgent', 'o', '', lambda path: None, {}),
        ], announce=False)
        node.add_interface(PROFILE_MANAGER, {}, [
            ('RegisterProfile', 'osa{sv}', '', lambda path, uuid, options: None, {}),
            ('UnregisterProfile', 'o', '', lambda path: None, {}),
        ], announce=False)
        controls = [
            ('AddStrap', 'ssn', '', self.control_add_strap),
            ('RemoveStrap', 's', '', self.control_remove_strap),
            ('SetInRange', 'sb', '', self.control_set_in_range),
            ('SetRssi', 'sn', '', self.control_set_rssi),
            ('DropLink', 's', '', self.control_drop_link),
            ('RefuseConnects', 'su', '', self.control_refuse_connects),
            ('RefuseConnectsWith', 'suss', '', self.control_refuse_connects_with),
            ('SetBattery', 'sy', '', self.control_set_battery),
            ('StartStream', 'sdaq', '', self.control_start_stream),
            ('StopStream', 's', '', self.control_stop_stream),
            ('PlayOnce', 'sdaq', '', self.control_play_once),
            ('PlaySchedule', 'sa(dqyy)', 'd', self.control_play_schedule),
            ('Played', 'su', 'ua(ddiqyy)', self.control_played),
            ('SendRaw', 'say', '', self.control_send_raw),
            ('GetStats', 's', 'a{sv}', self.control_get_stats),
            ('ListStraps', '', 'as', self.control_list_straps),
        ]
        for name, in_sig, out_sig, impl in controls:
            # Methods only: org.pacer.BluezSim1 is not part of what bluetoothd
            # exports, so it stays out of GetManagedObjects.
            export_method(node.obj, CONTROL, name, in_sig, out_sig, self._logged(name, impl))
        return node

    def _logged(self, name, impl):
        def plain(value):
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            if isinstance(value, str):
                return str(value)
            return float(value) if isinstance(value, float) else int(value)

        def call(*args):
            log(f'control {name} {[plain(a) for a in args]}')
            return impl(*args)
        return call

    def _make_adapter(self):
        node = Node(self, ADAPTER_PATH, writable={ADAPTER: {
            'Alias': ('s', lambda v: node.set(ADAPTER, Alias=dbus.String(v or self.adapter_name))),
            'Powered': ('b', self.set_powered),
            'Discoverable': ('b', self._set_discoverable),
            'Pairable': ('b', lambda v: node.set(ADAPTER, Pairable=dbus.Boolean(bool(v)))),
            'DiscoverableTimeout': ('u', lambda v: node.set(ADAPTER, DiscoverableTimeout=dbus.UInt32(v))),
            'PairableTimeout': ('u', lambda v: node.set(ADAPTER, PairableTimeout=dbus.UInt32(v))),
        }})
        node.add_interface(ADAPTER, {
            'Address': dbus.String(self.adapter_address),
            'AddressType': dbus.String('public'),
            'Name': dbus.String(self.adapter_name),
            'Alias': dbus.String(self.adapter_name),
            'Class': dbus.UInt32(0x6C0000),
            'Powered': dbus.Boolean(self.powered),
            'PowerState': dbus.String('on' if self.powered else 'off'),
            'Discoverable': dbus.Boolean(False),
            'DiscoverableTimeout': dbus.UInt32(180),
            'Pairable': dbus.Boolean(True),
            'PairableTimeout': dbus.UInt32(0),
            'Discovering': dbus.Boolean(False),
            'UUIDs': as_array([uuid16(0x1801), uuid16(0x1800), uuid16(0x110E), uuid16(0x110C),
                               uuid16(0x1200), uuid16(0x180A)], 's'),
            'Modalias': dbus.String('usb:v1D6Bp0246d0542'),
            'Roles': as_array(['central', 'peripheral'], 's'),
        }, [
            ('StartDiscovery', '', '', self.start_discovery, dict(sender=True)),
            ('StopDiscovery', '', '', self.stop_discovery, dict(sender=True)),
            ('SetDiscoveryFilter', 'a{sv}', '', self.set_discovery_filter, dict(sender=True)),
            ('GetDiscoveryFilters', '', 'as', lambda: as_array(
                ['UUIDs', 'RSSI', 'Pathloss', 'Transport', 'DuplicateData', 'Discoverable', 'Pattern'], 's'), {}),
            ('RemoveDevice', 'o', '', self.remove_device, {}),
        ], announce=False)
        node.add_interface(GATT_MANAGER, {}, [
            ('RegisterApplication', 'oa{sv}', '', lambda path, options: None, {}),
            ('UnregisterApplication', 'o', '', lambda path: None, {}),
        ], announce=False)
        node.add_interface(LE_ADVERTISING_MANAGER, {
            'ActiveInstances': dbus.Byte(0),
            'SupportedInstances': dbus.Byte(5),
            'SupportedIncludes': as_array(['tx-power', 'appearance', 'local-name'], 's'),
        }, [
            ('RegisterAdvertisement', 'oa{sv}', '', lambda path, options: None, {}),
            ('UnregisterAdvertisement', 'o', '', lambda path: None, {}),
        ], announce=False)
        node.add_interface(MEDIA, {}, [
            ('RegisterEndpoint', 'oa{sv}', '', lambda path, props: None, {}),
            ('UnregisterEndpoint', 'o', '', lambda path: None, {}),
        ], announce=False)
        node.add_interface(NETWORK_SERVER, {}, [
            ('Register', 'ss', '', lambda uuid, bridge: None, {}),
            ('Unregister', 's', '', lambda uuid: None, {}),
        ], announce=False)
        return node

    # Adapter -------------------------------------------------------------------

    def set_powered(self, value):
        value = bool(value)
        if value == self.powered:
            return
        self.powered = value
        log(f'adapter powered {value}')
        if not value:
            for strap in self.straps.values():
                strap.cancel_pending('org.bluez.Error.Failed', 'le-connection-abort-by-local')
                strap.link_down('adapter powered off')
            self.discovery.clear()
            self.adapter.set(ADAPTER, Discoverable=dbus.Boolean(False))
            self._discovering_changed()
        self.adapter.set(ADAPTER, Powered=dbus.Boolean(value), PowerState=dbus.String('on' if value else 'off'))

    def _set_discoverable(self, value):
        if not self.powered:
            raise bluez_error('NotReady', 'Resource Not Ready')
        self.adapter.set(ADAPTER, Discoverable=dbus.Boolean(bool(value)))

    @property
    def discovering(self):
        return self.powered and bool(self.discovery)

    def start_discovery(self, sender):
        if not self.powered:
            raise bluez_error('NotReady', 'Resource Not Ready')
        key = self.clients.key(sender)
        if key in self.discovery:
            raise bluez_error('InProgress', 'Operation already in progress')
        self.discovery[key] = True
        self.clients.watch(key)
        log(f'discovery started by {key}')
        self._discovering_changed()

    def stop_discovery(self, sender):
        if not self.powered:
            raise bluez_error('NotReady', 'Resource Not Ready')
        key = self.clients.key(sender)
        if key not in self.discovery:
            raise bluez_error('Failed', 'No discovery started')
        del self.discovery[key]
        # A filter outlives its client's discovery session until it is reset
        # or the client leaves.
        log(f'discovery stopped by {key}')
        self._discovering_changed()

    def set_discovery_filter(self, properties, sender):
        if not self.powered:
            raise bluez_error('NotReady', 'Resource Not Ready')
        parsed = self.parse_filter(properties)
        key = self.clients.key(sender)
        if parsed is None:
            self.filters.pop(key, None)
        else:
            self.filters[key] = parsed
            self.clients.watch(key)
        log(f'discovery filter of {key}: {parsed}')
        if self.discovering:
            self.rescan()

    @staticmethod
    def parse_filter(properties):
        invalid = bluez_error('InvalidArguments', 'Invalid arguments in method call')
        if len(properties) == 0:
            return None
        result = {'uuids': [], 'rssi': None, 'pathloss': None, 'transport': 'auto', 'pattern': None}
        for key, value in properties.items():
            if key == 'UUIDs':
                if not isinstance(value, dbus.Array) or value.signature != 's':
                    raise invalid
                result['uuids'] = [expand_uuid(v) for v in value]
            elif key == 'RSSI':
                if not isinstance(value, dbus.Int16) or not -127 <= int(value) <= 20:
                    raise invalid
                result['rssi'] = int(value)
            elif key == 'Pathloss':
                if not isinstance(value, dbus.UInt16) or int(value) > 137:
                    raise invalid
                result['pathloss'] = int(value)
            elif key == 'Transport':
                if not isinstance(value, dbus.String) or str(value) not in ('auto', 'bredr', 'le'):
                    raise invalid
                result['transport'] = str(value)
            elif key in ('DuplicateData', 'Discoverable'):
                if not isinstance(value, dbus.Boolean):
                    raise invalid
            elif key == 'Pattern':
                if not isinstance(value, dbus.String):
                    raise invalid
                result['pattern'] = str(value)
            else:
                raise invalid
        if result['rssi'] is not None and result['pathloss'] is not None:
            raise invalid
        return result

    @staticmethod
    def filter_matches(parsed, strap):
        if parsed is None:
            return True
        if parsed['transport'] == 'bredr':
            return False
        if parsed['uuids'] and not set(parsed['uuids']) & set(ADVERTISED_UUIDS):
            return False
        if parsed['rssi'] is not None and strap.rssi < parsed['rssi']:
            return False
        if parsed['pathloss'] is not None:
            return False  # straps advertise no TX power, so no path loss
        pattern = parsed['pattern']
        if pattern and not (strap.address.startswith(pattern.upper()) or strap.name.startswith(pattern)):
            return False
        return True

    def visible(self, strap):
        '''Whether the scan reports the strap: discovering, in range, not
        connected (a connected strap stops advertising), and matching the filter
        of at least one discovering client (bluetoothd merges them).'''
        if not self.discovering or not strap.in_range or strap.connected:
            return False
        return any(self.filter_matches(self.filters.get(key), strap) for key in self.discovery)

    def rescan(self):
        for strap in self.straps.values():
            if self.visible(strap) and strap.advert_timer is None:
                strap.advert_timer = later(self.params['advert_delay'], strap.seen)

    def _discovering_changed(self):
        discovering = self.discovering
        self.adapter.set(ADAPTER, Discovering=dbus.Boolean(discovering))
        if discovering:
            self.rescan()
        else:
            for strap in self.straps.values():
                strap.discovery_ended()

    def remove_device(self, path):
        for strap in self.straps.values():
            if strap.path == path and strap.node is not None:
                strap.paired = False
                strap.trusted = False
                strap.unexport()
                strap.uuids = list(ADVERTISED_UUIDS)
                if self.discovering:
                    self.rescan()
                return
        raise bluez_error('DoesNotExist', 'Does Not Exist')

    def client_gone(self, key):
        self.filters.pop(key, None)
        for strap in self.straps.values():
            strap.client_gone(key)
        if key in self.discovery:
            del self.discovery[key]
            self._discovering_changed()

    # Controls --------------------------------------------------------------------

    def strap(self, address):
        address = normalise_address(address)
        if address not in self.straps:
            raise control_error('NoSuchStrap', f'no strap {address}')
        return self.straps[address]

    def control_add_strap(self, address, name, rssi):
        '''AddStrap(s address, s name, n rssi): a new strap, switched on, in
        range, not paired: it appears (InterfacesAdded, with RSSI) once a
        discovery whose filter it matches sees it.'''
        address = normalise_address(address)
        if address in self.straps:
            raise control_error('Exists', f'strap {address} exists')
        strap = Strap(self, {'address': address, 'name': str(name), 'rssi': int(rssi), 'paired': False})
        self.straps[address] = strap
        if self.discovering:
            self.rescan()

    def control_remove_strap(self, address):
        '''RemoveStrap(s address): the strap leaves the world: its link drops,
        its stream stops and its device object goes (InterfacesRemoved).'''
        strap = self.strap(address)
        strap.stop_stream()
        strap.unexport()
        del self.straps[strap.address]

    def control_set_in_range(self, address, in_range):
        '''SetInRange(s address, b in_range): false is a strap switched off or
        carried away: a live link drops (as link loss), Connect fails after
        connect_timeout. true: discovery sees it again, a pending Connect
        completes.'''
        strap = self.strap(address)
        strap.in_range = bool(in_range)
        if not strap.in_range:
            strap.went_out_of_range()
        else:
            strap.came_in_range()
            if self.discovering:
                self.rescan()

    def control_set_rssi(self, address, rssi):
        '''SetRssi(s address, n rssi): the signal strength adverts arrive with;
        a strap being discovered reports it (PropertiesChanged RSSI).'''
        strap = self.strap(address)
        strap.rssi = int(rssi)
        if strap.discovered and strap.node is not None and self.visible(strap):
            strap.node.set(DEVICE, RSSI=dbus.Int16(strap.rssi))
        elif self.discovering:
            self.rescan()

    def control_drop_link(self, address):
        '''DropLink(s address): link loss now (supervision timeout); the strap
        stays in range, so a reconnect succeeds.'''
        strap = self.strap(address)
        if not strap.connected:
            raise control_error('NotConnected', f'strap {strap.address} is not connected')
        strap.link_down('link loss')

    def control_refuse_connects(self, address, count):
        '''RefuseConnects(s address, u count): the next `count` Connect (or Pair)
        calls fail after refuse_delay with org.bluez.Error.Failed
        "le-connection-abort-by-local".'''
        self.control_refuse_connects_with(address, count, 'org.bluez.Error.Failed', 'le-connection-abort-by-local')

    def control_refuse_connects_with(self, address, count, error_name, message):
        '''RefuseConnectsWith(s address, u count, s error_name, s message): as
        RefuseConnects, failing with this error instead.'''
        strap = self.strap(address)
        strap.refuse_remaining = int(count)
        strap.refuse_error = (str(error_name), str(message))

    def control_set_battery(self, address, percent):
        '''SetBattery(s address, y percent): the strap's battery level; while
        connected, Battery1.Percentage changes (and 2A19 notifies if asked).'''
        if int(percent) > 100:
            raise control_error('InvalidArguments', 'percent above 100')
        self.strap(address).set_battery(int(percent))

    def control_start_stream(self, address, rate_hz, bpm_values):
        '''StartStream(s address, d rate_hz, aq bpm_values): the strap measures
        at rate_hz. Each measurement takes the next sequence number (0, 1, 2…,
        never reset) and, while connected and notifying, is sent as a 2A37
        notification: flags 0x10, heart rate bpm_values[seq % n] (uint8), one
        RR interval carrying seq & 0xFFFF. Measurements while disconnected or
        not notifying are skipped but use their number. Replaces a running
        stream (the numbers go on).'''
        self.strap(address).start_stream(*stream_arguments(rate_hz, bpm_values))

    def control_stop_stream(self, address):
        '''StopStream(s address): no more measurements.'''
        self.strap(address).stop_stream()

    def control_play_once(self, address, rate_hz, bpm_values):
        '''PlayOnce(s address, d rate_hz, aq bpm_values): a stream (as
        StartStream: sequence numbers, flags, skipped while not notifying) that
        measures each value once, in order, the first 1 / rate_hz after the
        call, and then stops; streaming is false once the last has gone.
        Timed by the simulator, so a test's own scheduling cannot delay it.'''
        self.strap(address).start_stream(*stream_arguments(rate_hz, bpm_values), once=True)

    def control_play_schedule(self, address, entries):
        '''PlaySchedule(s address, a(dqyy) entries) -> d start: a stream of
        irregular measurements, each entry (at_s, bpm, contact, fate) measured
        at start + at_s on the monotonic clock (at_s non-decreasing, >= 0).
        contact: 0 not supported (flags 0x10, as StartStream), 1 detected
        (0x16), 2 not detected (0x14). fate: 0 sent (skipped while not
        notifying, as a stream), 1 lost on the radio (takes its sequence number,
        never sent: counted in skipped and lost), 2 silent (no measurement and
        no number: the strap says nothing; logged with its due time). Replaces a
        running stream, the numbers go on; streaming is false once the last
        entry is done. Returns start, CLOCK_MONOTONIC seconds.'''
        strap = self.strap(address)
        parsed = []
        previous = 0.0
        for entry in entries:
            at_s, bpm, contact, fate = float(entry[0]), int(entry[1]), int(entry[2]), int(entry[3])
            if not (math.isfinite(at_s) and at_s >= previous):
                raise control_error('InvalidArguments', 'at_s must be finite, >= 0 and non-decreasing')
            if contact not in CONTACT_FLAGS or fate not in (FATE_DELIVERED, FATE_LOST, FATE_SILENT):
                raise control_error('InvalidArguments', 'contact must be 0-2 and fate 0-2')
            previous = at_s
            parsed.append((at_s, bpm, contact, fate))
        if not parsed:
            raise control_error('InvalidArguments', 'entries is empty')
        strap.stop_stream()
        strap.stream = Schedule(strap, parsed)
        return dbus.Double(strap.stream.start / 1e6)

    def control_played(self, address, first):
        '''Played(s address, u from) -> (u index, a(ddiqyy) entries): the strap's
        measurements from index `from` on (0 is its first; the newest 100,000
        are kept, `index` is that of the first returned), each (due, at, seq,
        bpm, flags, fate): due and at CLOCK_MONOTONIC seconds (at: when it was
        sent, lost, skipped or, for a silent entry, passed), seq -1 for silent
        ones, fate 0 delivered, 1 lost, 2 silent, 3 skipped (not connected or
        not notifying).'''
        strap = self.strap(address)
        start = max(int(first), strap.played_base)
        rows = strap.played[start - strap.played_base:]
        return (dbus.UInt32(start), dbus.Array(
            [dbus.Struct((dbus.Double(d), dbus.Double(a), dbus.Int32(q), dbus.UInt16(b), dbus.Byte(f), dbus.Byte(x)),
                         signature='ddiqyy') for d, a, q, b, f, x in rows], signature='(ddiqyy)'))

    def control_send_raw(self, address, value):
        '''SendRaw(s address, ay value): one 2A37 notification with exactly
        these bytes (malformed ones too); uses no sequence number. Fails with
        org.pacer.BluezSim1.Error.NotNotifying unless connected and notifying.'''
        strap = self.strap(address)
        if not strap.notifying(HR_MEASUREMENT):
            raise control_error('NotNotifying', f'strap {strap.address} is not connected and notifying')
        strap.notify(HR_MEASUREMENT, [int(b) for b in value])
        strap.stats['raw_sent'] += 1

    def control_get_stats(self, address):
        '''GetStats(s address) -> a{sv}: sent (all notifications emitted on
        2A37/2A19), stream_sent, raw_sent, skipped (stream measurements not
        delivered), next_seq (measurements so far; the RR field carries it mod
        65536), connects (links established), connect_calls (Connect/Pair
        attempts), refused (attempts that failed), disconnects (links lost or
        closed), and the state: connected, notifying, streaming, in_range,
        paired, trusted, battery, rate_hz, bpm_values, name, address_type,
        rssi (what a restart needs to bring the strap back as it was).'''
        strap = self.strap(address)
        stats = {k: dbus.UInt32(v) for k, v in strap.stats.items()}
        stats.update({
            'name': dbus.String(strap.name),
            'address_type': dbus.String(strap.address_type),
            'rssi': dbus.Int16(strap.rssi),
            'trusted': dbus.Boolean(strap.trusted),
            'bpm_values': as_array([dbus.UInt16(v) for v in strap.stream.bpm_values] if strap.stream else [], 'q'),
            'next_seq': dbus.UInt32(strap.next_seq),
            'connected': dbus.Boolean(strap.connected),
            'notifying': dbus.Boolean(strap.notifying(HR_MEASUREMENT)),
            'streaming': dbus.Boolean(strap.stream is not None),
            'in_range': dbus.Boolean(strap.in_range),
            'paired': dbus.Boolean(strap.paired),
            'battery': dbus.Byte(strap.battery),
            'rate_hz': dbus.Double(strap.stream.rate if strap.stream else 0.0),
        })
        return dbus.Dictionary(stats, signature='sv')

    def control_list_straps(self):
        '''ListStraps() -> as: the addresses of all simulated straps.'''
        return as_array(sorted(self.straps), 's')


def load(mock, parameters):
    '''dbusmock's entry point: `mock` is the object at /.'''
    global SIM
    SIM = Simulator(mock, parameters or {})
