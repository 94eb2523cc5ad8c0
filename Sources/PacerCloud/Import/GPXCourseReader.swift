import CloudModel

/// A race course from a GPX file: the points of its first track (every segment, in order), or
/// of its first route when it has no track. Times are not needed (a course drawn in a planner
/// has none). Bounded: at most `maxPoints` are read, and the course is then thinned
/// (`RaceRules.thinned`).
enum GPXCourseReader {
    static let maxPoints = 200_000

    static func course(_ bytes: [UInt8]) throws(ImportError) -> [LatLon] {
        var track: [LatLon] = [], route: [LatLon] = []
        var depth = 0, tracks = 0, routes = 0
        var inTrack = false, inRoute = false
        var scanner = XMLScanner(bytes)
        do {
            try scanner.scan { event, line in
                switch event {
                case .start(let qualified, let attributes):
                    let name = qualified.split(separator: ":").last.map(String.init) ?? qualified
                    if depth == 0, name != "gpx" { throw ImportError("GPX line \(line): the document is <\(qualified.prefix(40))>, not <gpx>: this is no GPX file") }
                    depth += 1
                    switch name {
                    case "trk": tracks += 1; inTrack = tracks == 1
                    case "rte": routes += 1; inRoute = routes == 1
                    case "trkpt" where inTrack, "rtept" where inRoute:
                        guard let lat = attributes["lat"].flatMap(Double.init), let lon = attributes["lon"].flatMap(Double.init),
                              lat.isFinite, lon.isFinite, (-90...90).contains(lat), (-180...180).contains(lon) else {
                            throw ImportError("GPX line \(line): a <\(name)> without a valid lat and lon")
                        }
                        guard track.count + route.count < maxPoints else {
                            throw ImportError("GPX: more than \(maxPoints) points; a race course needs far fewer")
                        }
                        if name == "trkpt" { track.append(LatLon(lat: lat, lon: lon)) } else { route.append(LatLon(lat: lat, lon: lon)) }
                    default: break
                    }
                case .end(let qualified):
                    depth -= 1
                    let name = qualified.split(separator: ":").last.map(String.init) ?? qualified
                    if name == "trk" { inTrack = false }
                    if name == "rte" { inRoute = false }
                case .text: break
                }
            }
        } catch let failure as XMLScanner.Failure {
            throw ImportError("GPX line \(failure.line): \(failure.message)")
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError("GPX: \(error)")
        }
        let points = track.isEmpty ? route : track
        guard points.count >= 2 else { throw ImportError("GPX: no track or route with two points or more") }
        return RaceRules.thinned(points)
    }
}
