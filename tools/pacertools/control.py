"""A client of pacerd's control socket (JSON lines, Sources/Control/PROTOCOL.md)."""

import json
import socket


class ControlError(Exception):
    pass


class Control:
    """One connection, reused for every request (and made again once if it broke)."""

    def __init__(self, path):
        self.path = path
        self.sock = None
        self.reader = None
        self.next_id = 0

    def _connect(self):
        self.close()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(self.path)
        self.sock, self.reader = s, s.makefile("rb")

    def request(self, command, **arguments):
        for attempt in (0, 1):
            try:
                if self.sock is None:
                    self._connect()
                self.next_id += 1
                body = dict(arguments, id=self.next_id, command=command)
                self.sock.sendall(json.dumps(body).encode() + b"\n")
                while True:
                    line = self.reader.readline()
                    if not line:
                        raise ConnectionError("pacerd closed the control connection")
                    reply = json.loads(line)
                    if "ok" in reply:
                        break
                if not reply["ok"]:
                    raise ControlError(f"{command}: {reply.get('error')}")
                return reply.get("result")
            except (OSError, ValueError):
                self.close()
                if attempt == 1:
                    raise

    def status(self):
        return self.request("status")

    def close(self):
        if self.sock is not None:
            self.reader.close()
            self.sock.close()
        self.sock = self.reader = None
