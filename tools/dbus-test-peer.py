#!/usr/bin/python3
"""A D-Bus peer for Pacer's bus tests (Tests/SystemdTests): owns org.pacer.TestPeer on the bus
named by DBUS_SYSTEM_BUS_ADDRESS and answers with what it was given, so the Swift side's
marshalling is checked against another implementation (dbus-python + libdbus).

Methods on /org/pacer/TestPeer, interface org.pacer.TestPeer:
  Echo(v) -> v                 the variant back, whatever it holds
  EchoMany(a{sv} ay (sq) ao) -> the same four
  Emit(u count)                emits Tick(u n) count times, n = 0..count-1
  Sleep(d seconds)             answers after that long (for timeouts)
  Fail(s name, s message)      answers with that D-Bus error
Prints "ready" on stdout once the name is owned.
"""
import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IFACE = "org.pacer.TestPeer"


class Peer(dbus.service.Object):
    @dbus.service.method(IFACE, in_signature="v", out_signature="v")
    def Echo(self, value):
        return value

    @dbus.service.method(IFACE, in_signature="a{sv}ay(sq)ao", out_signature="a{sv}ay(sq)ao", byte_arrays=True)
    def EchoMany(self, props, data, pair, paths):
        return props, dbus.ByteArray(data), pair, dbus.Array(paths, signature="o")

    @dbus.service.signal(IFACE, signature="u")
    def Tick(self, n):
        pass

    @dbus.service.method(IFACE, in_signature="u")
    def Emit(self, count):
        for n in range(count):
            self.Tick(dbus.UInt32(n))

    @dbus.service.method(IFACE, in_signature="d", async_callbacks=("ok", "err"))
    def Sleep(self, seconds, ok, err):
        GLib.timeout_add(int(seconds * 1000), lambda: (ok(), False)[1])

    @dbus.service.method(IFACE, in_signature="ss")
    def Fail(self, name, message):
        raise dbus.exceptions.DBusException(message, name=name)


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    name = dbus.service.BusName(IFACE, bus)
    Peer(bus, "/org/pacer/TestPeer")
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
