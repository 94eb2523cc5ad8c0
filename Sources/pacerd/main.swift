// pacerd: the Pacer daemon. The live service (gpsd, store, systemd integration) is issue #4;
// until then this executable only identifies itself, and says so rather than pretending to run.
let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--version") {
    print("pacerd 0.1.0")
} else {
    let message = "pacerd: the live daemon is not implemented yet (issue #4); use `pacerctl replay` to run the pipeline over a recorded gpsd log.\n"
    FileHandleLike.standardError(message)
    exitWithStatus(69)  // EX_UNAVAILABLE
}
