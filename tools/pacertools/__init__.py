"""What the benchmarks and the soak (tools/bench-*, tools/soak) share: the repository's paths,
child processes stopped by process group, free ports, gpsfake, the NOTIFY_SOCKET listener, the
control-socket client, a private system bus, release builds and the report's formatting.

A script imports it from its own directory:

    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from pacertools.processes import end_group
"""
