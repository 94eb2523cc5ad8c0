import Buttons
import PacerCore
import SOS
import ServiceLifecycle

/// The run button: key events from evdev into the pipeline, which tells short and long presses
/// apart, and into the SOS lane, which raises on a very long press itself (while the key is still
/// held), so a busy pipeline never delays an SOS.
struct ButtonService: Service {
    let devicePath: String
    let keyCodes: [Int]
    let pipeline: PipelineThread
    let sos: SOSLane
    let log: DaemonLog

    func run() async throws {
        let reader = EvdevButtonReader(configuration: .init(devicePath: devicePath, keyCodes: Set(keyCodes.map { UInt16($0) })))
        reader.start()
        defer { reader.stop() }
        for await input in reader.inputs.cancelOnGracefulShutdown() {
            switch input {
            case .key(let key):
                guard let action = ButtonKeyEvent.Action(evdevValue: key.value) else { continue }
                let event = ButtonKeyEvent(keyCode: key.code, action: action, time: key.time)
                sos.put(.buttonKey(event))
                pipeline.queue.put(.buttonKey(event))
            case .deviceOpened(let path, _):
                log(.info, "buttons", "reading buttons from \(path)")
            case .deviceUnavailable(let path, let reason):
                log(.warning, "buttons", "button device \(path) unavailable (\(reason)); retrying")
                sos.put(.buttonsReset)
                pipeline.queue.put(.buttonsReset)
            case .eventsDropped:
                log(.warning, "buttons", "the kernel dropped button events; any press in progress is ignored")
                sos.put(.buttonsReset)
                pipeline.queue.put(.buttonsReset)
            }
        }
    }
}
