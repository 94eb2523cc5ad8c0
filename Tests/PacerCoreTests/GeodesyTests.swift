import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct GeodesyTests {
    static func dms(_ d: Double, _ m: Double, _ s: Double) -> Double {
        (d.sign == .minus ? -1 : 1) * (abs(d) + m / 60 + s / 3600)
    }

    @Test func flindersPeakToBuninyong() {
        // Vincenty (1975) / Geoscience Australia's worked example: 54 972.271 m.
        let flinders = Coordinate(latitude: -Self.dms(37, 57, 3.72030), longitude: Self.dms(144, 25, 29.52440))
        let buninyong = Coordinate(latitude: -Self.dms(37, 39, 10.15610), longitude: Self.dms(143, 55, 35.38390))
        #expect(abs(WGS84.distance(flinders, buninyong) - 54_972.271) < 0.001)
    }

    @Test func equatorAndMeridianDegrees() {
        // One degree of longitude on the equator is a·π/180; one degree of latitude from the
        // equator is the meridian arc 110 574.389 m (WGS84).
        let origin = Coordinate(latitude: 0, longitude: 0)
        #expect(abs(WGS84.distance(origin, Coordinate(latitude: 0, longitude: 1)) - 111_319.491) < 0.001)
        #expect(abs(WGS84.distance(origin, Coordinate(latitude: 1, longitude: 0)) - 110_574.389) < 0.01)
    }

    @Test func sphereWouldBeOffByMoreThanTheBudget() {
        // At 45° N heading north, a mean-radius sphere differs from the ellipsoid by ~0.1 %.
        let a = Coordinate(latitude: 45, longitude: 9), b = Coordinate(latitude: 45.01, longitude: 9)
        let sphere = 6_371_008.8 * 0.01 * .pi / 180
        let ellipsoid = WGS84.distance(a, b)
        #expect(abs(sphere - ellipsoid) / ellipsoid > 0.0005)
    }

    @Test func localPlaneAgreesWithVincentyOverShortSteps() {
        let origin = Coordinate(latitude: 45.4775, longitude: 9.2241)
        for (east, north) in [(3.0, 4.0), (-50.0, 20.0), (0.0, -100.0), (250.0, 250.0)] {
            let point = WGS84.offsetting(origin, east: east, north: north)
            let back = WGS84.localOffset(of: point, from: origin)
            #expect(abs(back.east - east) < 1e-6 && abs(back.north - north) < 1e-6)
            let planar = (east * east + north * north).squareRoot()
            #expect(abs(WGS84.distance(origin, point) - planar) < planar * 1e-5)
        }
    }

    @Test func samePointIsZero() {
        let p = Coordinate(latitude: 12.3, longitude: -45.6)
        #expect(WGS84.distance(p, p) == 0)
    }
}
