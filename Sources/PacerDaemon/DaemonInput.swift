import BlueZ
import CloudSync
import PacerConfig
import PacerCore
import PacerSession

/// Everything the pipeline thread reacts to, in the order it arrived.
enum DaemonInput: Sendable {
    /// A gpsd JSON line as received, with CLOCK_MONOTONIC at receipt.
    case gpsLine(String, receivedNs: UInt64)
    case gpsLink(GPSLink)
    /// What the heart-rate strap client reports; notifications carry CLOCK_MONOTONIC at receipt.
    case strap(StrapEvent)
    /// Which straps are being looked for (none: not paired).
    case strapChoice(StrapChoice)
    /// A request from the control socket or a button; `reply` is called once, on the pipeline thread.
    case command(RunCommand, reply: @Sendable (Result<DaemonStatus, CommandFailure>) -> Void)
    /// A run button went down or up (CLOCK_MONOTONIC, from the kernel when it can say).
    case buttonKey(ButtonKeyEvent)
    /// The button device dropped events or went away: any press in progress is forgotten.
    case buttonsReset
    case reload(PacerConfiguration)
    /// The training plan in use (nil: none), from the sync thread.
    case plan(DevicePlan?)
    /// The units of the account that owns the device ("km", "mi"; nil: none), from the sync thread.
    case accountUnits(String?)
    /// What the cloud answered to race mode's positions (from the uplink thread).
    case raceReply(raceID: String, RaceReply)
    /// The races of the last sync (from the sync thread): the reminders before their starts.
    case races([UpcomingRace])
    /// Close the run and stop; `done` is called once everything is written.
    case shutdown(done: @Sendable () -> Void)
}
