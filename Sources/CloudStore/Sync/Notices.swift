import CloudModel
import Foundation
import PacerContract
import Threads

/// Notices for devices to say (`pacer-cloud notice send`), delivered by the sync channel.
public enum Notices {
    /// Queues `text`, cleaned for speech, for the device named `target`, or for every device of
    /// the account whose address `target` is (it has an @). The notices queued, one per device.
    public static func send(store: CloudStore, to target: String, text: String,
                            nowMs: Int64? = nil) async throws -> [StoredNotice] {
        let cleaned = NoticeText.clean(text)
        guard !cleaned.isEmpty else { throw StoreError("the notice is empty once cleaned for speech") }
        guard cleaned.count <= NoticeText.maxLength else {
            throw StoreError("the notice is \(cleaned.count) characters; at most \(NoticeText.maxLength) are said")
        }
        let devices: [Device]
        if target.contains("@") {
            let address = try EmailAddress.normalized(target).get()
            guard let owner = try await store.accounts.account(email: address) else { throw StoreError("no account has the address '\(address)'") }
            devices = try await store.devices.devices(accountID: owner.account.id)
            guard !devices.isEmpty else { throw StoreError("the account \(address) has no device") }
        } else {
            guard let device = try await store.devices.devices().first(where: { $0.name == target }) else {
                throw StoreError("no device is named '\(target.prefix(64))'")
            }
            devices = [device]
        }
        var queued: [StoredNotice] = []
        for device in devices {
            let notice = StoredNotice(id: UUID().uuidString.lowercased(), device: device.id, text: cleaned, createdMs: nowMs ?? WallClock.milliseconds())
            try await store.sync.addNotice(notice)
            queued.append(notice)
        }
        return queued
    }
}
