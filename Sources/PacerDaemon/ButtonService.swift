import Buttons
import PacerCore
import ServiceLifecycle

/// The run button: key events from evdev into the pipeline, which tells presses apart (it owns
/// the timing, so a very long press fires while the key is still held).
struct ButtonService: Service {
    let devicePath: String
    let keyCodes: [Int]
    let pipeline: PipelineThread
    let log: DaemonLog

    func run() async throws {
        let reader = EvdevButtonReader(configuration: .init(devicePath: devicePath, keyCodes: Set(keyCodes.map { UInt16($0) })))
        reader.start()
        defer { reader.stop() }
        for await input in reader.inputs.cancelOnGracefulShutdown() {
            switch input {
            case .key(let key):
                guard let action = ButtonKeyEvent.Action(evdevValue: key.value) else { continue }
                pipeline.queue.put(.buttonKey(ButtonKeyEvent(keyCode: key.code, action: action, time: key.time)))
            case .deviceOpened(let path, _):
                log(.info, "buttons", "reading buttons from \(path)")
            case .deviceUnavailable(let path, let reason):
                log(.warning, "buttons", "button device \(path) unavailable (\(reason)); retrying")
                pipeline.queue.put(.buttonsReset)
            case .eventsDropped:
                log(.warning, "buttons", "the kernel dropped button events; any press in progress is ignored")
                pipeline.queue.put(.buttonsReset)
            }
        }
    }
}
