@testable import CloudModel
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// Shoes (#33): a pair's distance is its starting distance plus the believed runs chosen for it;
/// past its reminder the pages say to replace it; bad fields are 400 naming them; another
/// account's pair can be neither chosen nor changed.
@Suite("pacer-cloud: shoes and their distances", .timeLimit(.minutes(10)))
struct ShoeTests {
    static func shoeID(_ html: String, name: String) -> String? {
        guard let range = html.range(of: "<h2>\(name)") else { return nil }
        let before = html[..<range.lowerBound]
        guard let id = before.range(of: "id=\"shoe-", options: .backwards) else { return nil }
        return String(before[id.upperBound...].prefix(36))
    }

    @Test("runs chosen for a pair add to its distance; past the reminder the list and the runs page say so; retired pairs leave the run form",
          arguments: Backend.allCases)
    func distances(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await RunnerPageTests.runner(cloud, browser)
            #expect(try await browser.get("/shoes").text.contains("No shoes yet"))
            #expect(try await browser.post("/shoes", ["name": " Blue trainers ", "start_km": "690,5", "remind_km": "700"]).status == .seeOther)
            let page = try await browser.get("/shoes").text
            let blue = try #require(Self.shoeID(page, name: "Blue trainers"))
            #expect(page.contains("<b>690.50 km</b>") && !page.contains("Time to replace"))

            let first = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 5_000))
            let second = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 6_000, startMs: Track.start + 86_400_000))
            _ = try await browser.get("/stats")  // their figures
            let form = try await browser.get("/runs/\(first)/edit").text
            #expect(form.contains(#"<option value="\#(blue)">Blue trainers</option>"#))
            for run in [first, second] {
                #expect(try await browser.post("/runs/\(run)/edit", ["title": "", "sport": "run", "visibility": "private", "shoe": blue]).status == .seeOther)
            }
            #expect(try await browser.get("/runs/\(first)/edit").text.contains(#"<option value="\#(blue)" selected>"#))
            let due = try await browser.get("/shoes").text
            #expect(due.contains("<b>701.50 km</b>") && due.contains("Time to replace them"), "690.5 + 5 + 6 km, past 700")
            #expect(try await browser.get("/runs").text.contains("Time to replace Blue trainers: 701.50 km, past your reminder at 700.00 km"))

            // A run no longer in the pair, or deleted, no longer counts.
            #expect(try await browser.post("/runs/\(second)/edit", ["title": "", "sport": "run", "visibility": "private", "shoe": ""]).status == .seeOther)
            #expect(try await browser.get("/shoes").text.contains("<b>695.50 km</b>"))
            #expect(!(try await browser.get("/runs").text.contains("Time to replace")))
            // Retired: off the run form (but kept on the run that has it), no reminder.
            #expect(try await browser.post("/shoes/\(blue)", ["name": "Blue trainers", "start_km": "700", "remind_km": "700", "retired": "1"],
                                           formPage: "/shoes").status == .seeOther)
            #expect(!(try await browser.get("/runs/\(second)/edit").text.contains("Blue trainers")))
            #expect(try await browser.get("/runs/\(first)/edit").text.contains(#"<option value="\#(blue)" selected>"#))
            #expect(!(try await browser.get("/runs").text.contains("Time to replace")))
            // Deleted: the run keeps its figures and loses the pair.
            #expect(try await browser.post("/shoes/\(blue)/delete", [:], formPage: "/shoes").status == .seeOther)
            #expect(try await cloud.store.shoes.shoes(accountID: account.id).isEmpty)
            let device = try #require(try await cloud.store.devices.devices().first { $0.name == "ann-pacer" })
            #expect(try await cloud.store.shoes.runShoe(device: device.id, runID: first) == nil)
            #expect(try await browser.get("/runs/\(first)").status == .ok)
        }
    }

    @Test("bad names and distances are 400 naming them with what was typed kept; another account's pair is 404 and cannot be chosen; 50 at most",
          arguments: Backend.allCases)
    func refusals(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await RunnerPageTests.runner(cloud, browser)
            let bad: [([String: String], String)] = [
                (["name": "", "start_km": "1"], "Name: 1 to 64 characters"),
                (["name": "two\nlines"], "Name: 1 to 64 characters"),
                (["name": "Hidden\u{200B}", "start_km": "1"], "Name: 1 to 64 characters"),
                (["name": String(repeating: "n", count: 65)], "Name: 1 to 64 characters"),
                (["name": "Kept name", "start_km": "-5"], "Distance already run: a number of km from 0"),
                (["name": "Kept name", "start_km": "1e3"], "Distance already run"),
                (["name": "Kept name", "start_km": "nan"], "Distance already run"),
                (["name": "Kept name", "start_km": "20000.1"], "Distance already run"),
                (["name": "Kept name", "remind_km": "0"], "Remind me at: a number of km from 1"),
                (["name": "Kept name", "remind_km": "1.2.3"], "Remind me at"),
            ]
            for (fields, message) in bad {
                let refused = try await browser.post("/shoes", fields, formPage: "/shoes")
                #expect(refused.status == .badRequest && refused.text.contains(message), "\(fields): \(refused.status) \(refused.text.prefix(200))")
                if fields["name"] == "Kept name" { #expect(refused.text.contains(#"value="Kept name""#), "what was typed is kept") }
                if fields["start_km"] == "-5" { #expect(refused.text.contains(#"aria-describedby="new_start_km-error""#), "the field is marked") }
            }
            #expect(try await cloud.store.shoes.shoes(accountID: account.id).isEmpty, "nothing refused was stored")
            #expect(try await browser.post("/shoes", ["name": "Mine"], csrf: "forged").status == .forbidden)

            // Bob's pair: neither changed, deleted nor chosen for Ann's run.
            let bob = Browser(cloud)
            let (_, bobAccount) = try await RunnerPageTests.runner(cloud, bob, email: "bob@example.org", device: "bob-pacer")
            #expect(try await bob.post("/shoes", ["name": "Bob's racers"]).status == .seeOther)
            let bobs = try #require(try await cloud.store.shoes.shoes(accountID: bobAccount.id).first)
            #expect(try await browser.post("/shoes/\(bobs.id)", ["name": "taken"], formPage: "/shoes").status == .notFound)
            #expect(try await browser.post("/shoes/\(bobs.id)/delete", [:], formPage: "/shoes").status == .notFound)
            #expect(try await browser.post("/shoes/not-an-id", ["name": "x"], formPage: "/shoes").status == .notFound)
            let run = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 1_000))
            let chosen = try await browser.post("/runs/\(run)/edit", ["title": "", "sport": "run", "visibility": "private", "shoe": bobs.id])
            #expect(chosen.status == .badRequest && chosen.text.contains("Shoes: choose a pair of yours"))
            #expect(try await cloud.store.shoes.shoes(accountID: bobAccount.id).first == bobs)

            // At most 50 pairs.
            for index in 0..<Shoe.maxPerAccount {
                #expect(try await cloud.store.shoes.addShoe(Shoe(id: Track.runID(), accountID: account.id, name: "Pair \(index)", startM: 0, remindM: nil,
                                                                 retired: false, createdMs: Int64(index)), limit: Shoe.maxPerAccount))
            }
            #expect(try await browser.post("/shoes", ["name": "One too many"], formPage: "/shoes").status == .conflict)
            // Deleting the account deletes its shoes, not Bob's.
            _ = try #require(try await cloud.store.deleteAccount(id: account.id))
            #expect(try await cloud.store.shoes.shoes(accountID: account.id).isEmpty)
            #expect(try await cloud.store.shoes.shoes(accountID: bobAccount.id).count == 1)
        }
    }
}
