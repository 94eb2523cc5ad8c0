"""What both D-Bus simulators (tools/bluez-sim, tools/modemmanager-sim) answer alike: the
standard error names, and Properties.Get and GetAll over an object's property table
({interface: {name: value}})."""

import dbus


def dbus_error(name, message):
    return dbus.exceptions.DBusException(message, name='org.freedesktop.DBus.Error.' + name)


def get_property(props, interface, name):
    if interface not in props:
        raise dbus_error('InvalidArgs', f"No such interface '{interface}'")
    if name not in props[interface]:
        raise dbus_error('InvalidArgs', f"No such property '{name}'")
    return props[interface][name]


def get_all_properties(props, interface):
    if interface not in props:
        raise dbus_error('InvalidArgs', f"No such interface '{interface}'")
    return dbus.Dictionary(props[interface], signature='sv')
