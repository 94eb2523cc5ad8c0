"""tools/browser-test's harness: the shared Chromium (chromium.py), the servers a flow starts
(servers.py), how flows are registered and run (runner.py) and the flows themselves (flows/)."""
