import Testing
@testable import PacerCore

/// Milliseconds on the key events' monotonic clock.
private func ms(_ value: Int64) -> Duration { .milliseconds(value) }

private let enter: UInt16 = 28
private let btn0: UInt16 = 256

private func down(_ time: Int64, _ code: UInt16 = enter) -> ButtonKeyEvent {
    ButtonKeyEvent(keyCode: code, action: .press, time: ms(time))
}

private func up(_ time: Int64, _ code: UInt16 = enter) -> ButtonKeyEvent {
    ButtonKeyEvent(keyCode: code, action: .release, time: ms(time))
}

private func repeatKey(_ time: Int64, _ code: UInt16 = enter) -> ButtonKeyEvent {
    ButtonKeyEvent(keyCode: code, action: .autorepeat, time: ms(time))
}

extension ButtonGestureClassifier {
    /// Feeds the events in order and then advances far past every deadline.
    mutating func run(_ events: [ButtonKeyEvent], until end: Int64) -> [ButtonGestureEvent] {
        var gestures: [ButtonGestureEvent] = []
        for event in events { gestures += handle(event) }
        gestures += advance(to: ms(end))
        return gestures
    }
}

@Suite(.timeLimit(.minutes(10))) struct ButtonGestureTests {
    @Test func defaultsMatchTheConfigFile() {
        let defaults = ButtonGestureConfiguration()
        #expect(defaults.longPress == .milliseconds(1500))
        #expect(defaults.veryLongPress == .seconds(5))
        #expect(defaults.debounce == .milliseconds(30))
    }

    @Test func evdevValuesMapToActions() {
        #expect(ButtonKeyEvent.Action(evdevValue: 0) == .release)
        #expect(ButtonKeyEvent.Action(evdevValue: 1) == .press)
        #expect(ButtonKeyEvent.Action(evdevValue: 2) == .autorepeat)
        #expect(ButtonKeyEvent.Action(evdevValue: 3) == nil)
        #expect(ButtonKeyEvent.Action(evdevValue: -1) == nil)
    }

    @Test func aShortPressIsReportedOnceTheReleaseHasSettled() {
        var classifier = ButtonGestureClassifier()
        #expect(classifier.handle(down(1000)).isEmpty)
        #expect(classifier.handle(up(1200)).isEmpty)
        #expect(classifier.nextDeadline == ms(1230))
        #expect(classifier.advance(to: ms(1229)).isEmpty)
        let gestures = classifier.advance(to: ms(1230))
        #expect(gestures == [ButtonGestureEvent(keyCode: enter, gesture: .shortPress, time: ms(1200), heldFor: ms(200))])
        #expect(classifier.nextDeadline == nil)
        #expect(!classifier.isAnyKeyDown)
        #expect(classifier.advance(to: ms(9000)).isEmpty)
    }

    @Test(arguments: [
        (held: Int64(31), gesture: ButtonGesture.shortPress),
        (held: 1499, gesture: .shortPress),
        (held: 1500, gesture: .longPress),
        (held: 3000, gesture: .longPress),
        (held: 4999, gesture: .longPress),
    ])
    func theHoldTimeChoosesTheGesture(held: Int64, gesture: ButtonGesture) {
        var classifier = ButtonGestureClassifier()
        let gestures = classifier.run([down(0), up(held)], until: 20_000)
        #expect(gestures == [ButtonGestureEvent(keyCode: enter, gesture: gesture, time: ms(held), heldFor: ms(held))])
    }

    @Test func aVeryLongPressFiresWhileStillHeldAndTheReleaseSaysNothing() {
        var classifier = ButtonGestureClassifier()
        _ = classifier.handle(down(10_000))
        #expect(classifier.nextDeadline == ms(15_000))
        #expect(classifier.advance(to: ms(14_999)).isEmpty)
        #expect(classifier.advance(to: ms(15_000)) == [
            ButtonGestureEvent(keyCode: enter, gesture: .veryLongPress, time: ms(15_000), heldFor: .seconds(5))
        ])
        #expect(classifier.nextDeadline == nil)
        #expect(classifier.advance(to: ms(30_000)).isEmpty)
        #expect(classifier.isAnyKeyDown)
        #expect(classifier.handle(up(31_000)).isEmpty)
        #expect(classifier.advance(to: ms(40_000)).isEmpty)
        #expect(!classifier.isAnyKeyDown)
    }

    @Test func aLateTickReportsTheVeryLongPressAtTheMomentItPassed() {
        var classifier = ButtonGestureClassifier()
        _ = classifier.handle(down(0))
        let gestures = classifier.advance(to: ms(60_000))
        #expect(gestures.map(\.gesture) == [.veryLongPress])
        #expect(gestures.first?.time == ms(5000))
    }

    @Test func withoutAnyTickTheReleaseStillReportsTheVeryLongPressFirst() {
        var classifier = ButtonGestureClassifier()
        _ = classifier.handle(down(0))
        let gestures = classifier.handle(up(7000))
        #expect(gestures == [ButtonGestureEvent(keyCode: enter, gesture: .veryLongPress, time: ms(5000), heldFor: .seconds(5))])
        #expect(classifier.advance(to: ms(8000)).isEmpty)
    }

    @Test func pressBounceIsOnePress() {
        var classifier = ButtonGestureClassifier()
        let events = [down(0), up(4), down(9), up(13), down(20), up(800)]
        let gestures = classifier.run(events, until: 5000)
        // The press settled from its last bounce.
        #expect(gestures == [ButtonGestureEvent(keyCode: enter, gesture: .shortPress, time: ms(800), heldFor: ms(780))])
    }

    @Test func releaseBounceIsOneRelease() {
        var classifier = ButtonGestureClassifier()
        let events = [down(0), up(1000), down(1008), up(1015), down(1021), up(1027)]
        let gestures = classifier.run(events, until: 5000)
        #expect(gestures == [ButtonGestureEvent(keyCode: enter, gesture: .shortPress, time: ms(1027), heldFor: ms(1027))])
    }

    @Test func aBounceAcrossTheLongThresholdCountsTheWholePress() {
        // Released at 1490 but bounced back down: the press goes on, so it ends as a long one.
        var classifier = ButtonGestureClassifier()
        let gestures = classifier.run([down(0), up(1490), down(1500), up(1700)], until: 5000)
        #expect(gestures.map(\.gesture) == [.longPress])
        #expect(gestures.first?.heldFor == ms(1700))
    }

    @Test func aGlitchShorterThanTheDebounceIsNoPress() {
        var classifier = ButtonGestureClassifier()
        #expect(classifier.run([down(0), up(29)], until: 10_000).isEmpty)
        #expect(classifier.nextDeadline == nil)
        #expect(!classifier.isAnyKeyDown)
    }

    @Test func autorepeatChangesNothing() {
        var classifier = ButtonGestureClassifier()
        var events = [down(0)]
        for t in stride(from: Int64(250), to: 1000, by: 33) { events.append(repeatKey(t)) }
        events.append(up(1000))
        let gestures = classifier.run(events, until: 3000)
        #expect(gestures == [ButtonGestureEvent(keyCode: enter, gesture: .shortPress, time: ms(1000), heldFor: ms(1000))])
        // Autorepeat of a key not down does not start a press.
        #expect(classifier.run([repeatKey(4000), repeatKey(4033)], until: 20_000).isEmpty)
    }

    @Test func aRepeatedPressKeepsTheFirstAndAStrayReleaseIsIgnored() {
        var classifier = ButtonGestureClassifier()
        #expect(classifier.run([up(0), up(100)], until: 1000).isEmpty)
        let gestures = classifier.run([down(2000), down(3000), up(3600)], until: 10_000)
        #expect(gestures.map(\.gesture) == [.longPress])
        #expect(gestures.first?.heldFor == ms(1600))
    }

    @Test func eachKeyHasItsOwnGesture() {
        var classifier = ButtonGestureClassifier()
        let events = [down(0, enter), down(100, btn0), up(300, enter), up(2100, btn0)]
        let gestures = classifier.run(events, until: 10_000)
        #expect(gestures == [
            ButtonGestureEvent(keyCode: enter, gesture: .shortPress, time: ms(300), heldFor: ms(300)),
            ButtonGestureEvent(keyCode: btn0, gesture: .longPress, time: ms(2100), heldFor: ms(2000)),
        ])
    }

    @Test func gesturesOfSeveralKeysComeOutInTimeOrder() {
        var classifier = ButtonGestureClassifier()
        _ = classifier.handle(down(1000, btn0))
        _ = classifier.handle(down(0, enter))  // late: taken at 1000 as well
        _ = classifier.handle(up(1100, btn0))
        let gestures = classifier.advance(to: ms(60_000))
        #expect(gestures.map(\.keyCode) == [btn0, enter])
        #expect(gestures.map(\.gesture) == [.shortPress, .veryLongPress])
        #expect(gestures.map(\.time) == [ms(1100), ms(6000)])
    }

    @Test func bothKeysHeldGiveTwoVeryLongPresses() {
        var classifier = ButtonGestureClassifier()
        _ = classifier.handle(down(0, btn0))
        _ = classifier.handle(down(200, enter))
        #expect(classifier.nextDeadline == ms(5000))
        #expect(classifier.advance(to: ms(5000)).map(\.keyCode) == [btn0])
        #expect(classifier.nextDeadline == ms(5200))
        #expect(classifier.advance(to: ms(5200)).map(\.keyCode) == [enter])
    }

    @Test func anEventOlderThanTheLastTickIsTakenAtTheTickTime() {
        var classifier = ButtonGestureClassifier()
        _ = classifier.advance(to: ms(10_000))
        _ = classifier.handle(down(9000))
        #expect(classifier.now == ms(10_000))
        #expect(classifier.advance(to: ms(14_999)).isEmpty)
        #expect(classifier.advance(to: ms(15_000)).map(\.gesture) == [.veryLongPress])
    }

    @Test func nextDeadlineFollowsTheState() {
        var classifier = ButtonGestureClassifier()
        #expect(classifier.nextDeadline == nil)
        _ = classifier.handle(down(100))
        #expect(classifier.nextDeadline == ms(5100))
        _ = classifier.handle(up(600))
        #expect(classifier.nextDeadline == ms(630))
        _ = classifier.handle(down(610))  // a bounce: the press goes on
        #expect(classifier.nextDeadline == ms(5100))
    }

    @Test func resetForgetsAPressInProgress() {
        var classifier = ButtonGestureClassifier()
        _ = classifier.handle(down(0))
        classifier.reset()
        #expect(!classifier.isAnyKeyDown)
        #expect(classifier.nextDeadline == nil)
        #expect(classifier.run([up(1000)], until: 60_000).isEmpty)
        // The next press is whole again.
        #expect(classifier.run([down(61_000), up(61_200)], until: 62_000).map(\.gesture) == [.shortPress])
    }

    @Test func withoutDebounceAReleaseCountsAtOnce() {
        var classifier = ButtonGestureClassifier(configuration: .init(debounce: .zero))
        _ = classifier.handle(down(0))
        #expect(classifier.handle(up(5)) == [ButtonGestureEvent(keyCode: enter, gesture: .shortPress, time: ms(5), heldFor: ms(5))])
    }

    @Test func configuredThresholdsAreUsed() {
        let configuration = ButtonGestureConfiguration(debounce: .milliseconds(10), longPress: .milliseconds(500), veryLongPress: .seconds(2))
        var classifier = ButtonGestureClassifier(configuration: configuration)
        #expect(classifier.run([down(0), up(499)], until: 1000).map(\.gesture) == [.shortPress])
        #expect(classifier.run([down(2000), up(2600)], until: 3000).map(\.gesture) == [.longPress])
        #expect(classifier.run([down(4000)], until: 6000).map(\.gesture) == [.veryLongPress])
    }

    @Test func aVeryLongThresholdBelowTheLongOneNeverCrashes() {
        // A configuration the config file rejects; the core still behaves: no long presses.
        let configuration = ButtonGestureConfiguration(longPress: .seconds(3), veryLongPress: .seconds(2))
        var classifier = ButtonGestureClassifier(configuration: configuration)
        #expect(classifier.run([down(0), up(2500)], until: 10_000).map(\.gesture) == [.veryLongPress])
        #expect(classifier.run([down(20_000), up(21_000)], until: 30_000).map(\.gesture) == [.shortPress])
    }

    /// Many presses with contact bounce at both ends and irregular ticks, against the gestures the
    /// generator intended.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func randomPressesWithBounceAndIrregularTicks(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let configuration = ButtonGestureConfiguration()
        var classifier = ButtonGestureClassifier(configuration: configuration)
        var expected: [ButtonGestureEvent] = []
        var got: [ButtonGestureEvent] = []
        var t: Int64 = 1000
        var nextTick: Int64 = 0

        func feed(_ event: ButtonKeyEvent) {
            // Ticks that fall before this event, as a timer loop would run them.
            while ms(nextTick) < event.time {
                got += classifier.advance(to: ms(nextTick))
                nextTick += 20 + Int64(random.uniform() * 480)
            }
            got += classifier.handle(event)
        }

        func bounces(endingWith last: (Int64) -> ButtonKeyEvent, other: (Int64) -> ButtonKeyEvent) -> Int64 {
            // 0-3 bounces of 1-8 ms each, then the final edge.
            for _ in 0..<Int(random.uniform() * 4) {
                feed(last(t)); t += 1 + Int64(random.uniform() * 8)
                feed(other(t)); t += 1 + Int64(random.uniform() * 8)
            }
            feed(last(t))
            return t
        }

        for _ in 0..<200 {
            // Hold times spread over all three gestures, kept 50 ms clear of each threshold so a
            // bounce cannot move a press across one.
            var held = 100 + Int64(random.uniform() * 8000)
            for threshold: Int64 in [1500, 5000] where abs(held - threshold) < 50 { held += 100 }
            let pressed = bounces(endingWith: { down($0) }, other: { up($0) })
            t = pressed + held
            let released = bounces(endingWith: { up($0) }, other: { down($0) })
            let actualHeld = released - pressed
            if actualHeld >= 5000 {
                expected.append(ButtonGestureEvent(keyCode: enter, gesture: .veryLongPress, time: ms(pressed + 5000), heldFor: .seconds(5)))
            } else {
                let gesture: ButtonGesture = actualHeld >= 1500 ? .longPress : .shortPress
                expected.append(ButtonGestureEvent(keyCode: enter, gesture: gesture, time: ms(released), heldFor: ms(actualHeld)))
            }
            t = released + 100 + Int64(random.uniform() * 3000)
        }
        got += classifier.advance(to: ms(t + 10_000))
        #expect(got.count == expected.count)
        // The first difference, not 200 gestures of output.
        let mismatch = zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(mismatch == nil, "press \(mismatch?.offset ?? -1): got \(String(describing: mismatch?.element.0)), expected \(String(describing: mismatch?.element.1))")
        #expect(Set(expected.map(\.gesture)) == [.shortPress, .longPress, .veryLongPress])
    }
}
