"""What both D-Bus simulators (tools/bluez-sim, tools/modemmanager-sim) do alike: the standard
error names, Properties.Get and GetAll over an object's property table, and their start."""

import dbus


def dbus_error(name, message):
    return dbus.exceptions.DBusException(message, name='org.freedesktop.DBus.Error.' + name)


class PropertyTable:
    """Mixed into a simulator's exported object, whose `obj.props` is {interface: {name: value}}."""

    def _require_interface(self, interface):
        if interface not in self.obj.props:
            raise dbus_error('InvalidArgs', f"No such interface '{interface}'")
        return self.obj.props[interface]

    def _get(self, interface, name):
        props = self._require_interface(interface)
        if name not in props:
            raise dbus_error('InvalidArgs', f"No such property '{name}'")
        return props[name]

    def _get_all(self, interface):
        return dbus.Dictionary(self._require_interface(interface), signature='sv')


class SimulatorBase:
    """What a simulator starts with: dbusmock's root object, its connection, and the template's
    parameters over `defaults` (parameters it does not know are left out)."""

    def __init__(self, root, parameters, defaults):
        self.root = root
        self.connection = root.connection
        self.params = dict(defaults)
        self.params.update({k: v for k, v in parameters.items() if k in defaults})
