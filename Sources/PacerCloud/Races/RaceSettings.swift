/// How races run on this instance (#34).
public struct RaceSettings: Sendable {
    /// A race's frame is made at most this often (by whichever instance claims it): what a
    /// spectator waits at most, beyond the store's write, for a runner's new position.
    public var framePeriod: Duration = .milliseconds(500)
    /// A spectator gets the board (`event: frame`) at most this often; the followed runners'
    /// rows (`event: follow`, small) with every frame. The board is what weighs: with
    /// thousands of streams, every frame's board to every one of them was most of the bytes.
    public var boardEvery: Duration = .seconds(1)
    /// A race and its runners' statuses are read again after this (a device's post checks
    /// them): a disqualification stops a runner's positions being taken within it.
    public var lookupTTL: Duration = .seconds(5)
    /// A device's positions wait this long for others' before the batch is written.
    public var writeDelay: Duration = .milliseconds(20)
    /// Spectator streams open on this instance at once; more get a 503 to retry.
    public var maxStreams = 20_000
    /// A spectator stream ends after this (the browser reconnects), so none is held for ever.
    public var streamLifetime: Duration = .seconds(1_800)
    /// A comment this often keeps proxies from closing a quiet stream.
    public var heartbeat: Duration = .seconds(15)
    /// Positions are taken from an hour before the start until this long after it.
    public var positionsUntil: Duration = .seconds(12 * 3_600)

    public init() {}
}
