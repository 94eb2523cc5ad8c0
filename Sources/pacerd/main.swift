// pacerd: the Pacer daemon. Everything but the command line is in PacerDaemon.
import PacerCtlCommands
import PacerDaemon

#if canImport(Glibc)
import Glibc
#endif

func printTo(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    if bytes.last != 10 { bytes.append(10) }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

// Swift reads the command line from /proc/self/cmdline. Without /proc (a bare chroot) it is empty,
// and pacerd would start on the defaults, or pacerctl run as pacerd.
if CommandLine.arguments.isEmpty {
    printTo(2, "pacerd: cannot read its command line from /proc/self/cmdline: is /proc mounted?")
    exit(71)
}

// The package installs pacerctl as a link to this binary: one copy of the Swift runtime, not two.
if CommandLine.arguments.first?.split(separator: "/").last == "pacerctl" {
    PacerCtlMain.main()
}

let usage = """
    usage: pacerd [--config FILE]
           pacerd --check-config [FILE]
           pacerd --version

    Runs the Pacer daemon (normally as the systemd service pacerd.service).
      --config FILE         configuration file (default /etc/pacer/pacer.toml; defaults apply
                            when that file does not exist)
      --check-config [FILE] check a configuration file (default /etc/pacer/pacer.toml) and exit:
                            0 when it is valid, 78 with file:line: key: problem otherwise

    """

var configPath: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--version":
        printTo(1, "pacerd 0.1.0")
        exit(0)
    case "--help", "-h":
        printTo(1, usage)
        exit(0)
    case "--config":
        guard let path = arguments.popFirst() else {
            printTo(2, "pacerd: --config needs a FILE\n\(usage)")
            exit(Daemon.ExitCode.usage)
        }
        configPath = path
    case "--check-config":
        let path = arguments.popFirst() ?? configPath ?? "/etc/pacer/pacer.toml"
        let result = Daemon.checkConfig(path: path)
        printTo(result.ok ? 1 : 2, result.message)
        exit(result.ok ? 0 : Daemon.ExitCode.config)
    default:
        printTo(2, "pacerd: unknown argument '\(argument)'\n\(usage)")
        exit(Daemon.ExitCode.usage)
    }
}

exit(await Daemon.run(configPath: configPath))
