import DBus
import Foundation
import RecorderInterface
import Workouts

/// The mirror's own D-Bus object, through which `cyclelog-mirror pair`, `devices` and `revoke` reach the running
/// mirror. Only the Unix user who runs the mirror, root and members of its control group may call it, as for the
/// recorder.
///
///     bus name   org.cyclelog.Mirror     (on the recorder's control bus)
///     object     /org/cyclelog/Mirror
///     interface  org.cyclelog.Mirror1
///       Pair(s name, s types, b token) → (s url, s code, s token)
///                              types: a `DataType` list (`power,cadence`, `read`, `control,hr`)
///       Devices() → a(ssssxx)  name, types granted, types its page asked for beyond them, token SHA-256, paired
///                              and last seen (Unix seconds, 0: never)
///       Grant(s name, s changes) → a(ss)   `+hr`, `-hr,-cadence`, …: the devices changed and their types now;
///                              their open streams follow within 1 s
///       Revoke(s name) → u     the devices forgotten (by name, or by id: the first 8 hex digits of the token
///                              SHA-256); their streams are closed at once
public enum MirrorControl {
    public static let busName = "org.cyclelog.Mirror"
    public static let path = "/org/cyclelog/Mirror"
    public static let interface = "org.cyclelog.Mirror1"

    /// Exports the object and takes the name; fails when another mirror owns it.
    public static func export(
        on connection: DBusConnection, devices: DeviceRegistry, hub: MirrorHub, pairingBase: String,
        controlGroup: String?
    ) async throws(DBusError) {
        let owner = getuid()
        @Sendable func checkCaller(_ call: ExportedInterface.Call) async throws(DBusError) {
            try await RecorderControl.checkCaller(
                call, on: connection, owner: owner, group: controlGroup, what: "mirror")
        }
        let methods = [
            ExportedInterface.Method(
                "Pair", in: [.init("name", "s"), .init("types", "s"), .init("token", "b")],
                out: [.init("url", "s"), .init("code", "s"), .init("token", "s")]
            ) { (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let name = call.body.first?.string ?? ""
                let list = call.body.dropFirst().first?.string ?? ""
                let types: Set<DataType>
                switch DataType.list(list.isEmpty ? "control" : list) {
                case .success(let named): types = named
                case .failure(let error):
                    throw DBusError(name: DBusError.invalidArgumentsName, message: error.description)
                }
                guard (1...60).contains(name.count) else {
                    throw DBusError(name: DBusError.invalidArgumentsName, message: "name takes 1 to 60 characters")
                }
                let offer: DeviceRegistry.Offer
                do {
                    offer = try await devices.offer(
                        name: name, types: types, token: call.body.dropFirst(2).first?.bool ?? false)
                } catch {
                    throw DBusError(name: DBusError.failedName, message: "cannot store the device: \(error)")
                }
                let url = offer.oneTimeToken.isEmpty ? pairingBase : "\(pairingBase)/pair?t=\(offer.oneTimeToken)"
                return [.string(url), .string(offer.code), .string(offer.token ?? "")]
            },
            ExportedInterface.Method("Devices", out: [.init("devices", "a(ssssxx)")]) {
                (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                return [
                    .array(
                        elementSignature: "(ssssxx)",
                        await devices.all.map { device in
                            .structure([
                                .string(device.name), .string(DataType.text(device.types)),
                                .string(DataType.text(device.asked)), .string(device.tokenSHA256),
                                .int64(Int64(device.created.timeIntervalSince1970)),
                                .int64(Int64(device.lastSeen?.timeIntervalSince1970 ?? 0)),
                            ])
                        })
                ]
            },
            ExportedInterface.Method(
                "Grant", in: [.init("name", "s"), .init("changes", "s")], out: [.init("devices", "a(ss)")]
            ) { (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let changes: (add: Set<DataType>, remove: Set<DataType>)
                switch DataType.changes(call.body.dropFirst().first?.string ?? "") {
                case .success(let named): changes = named
                case .failure(let error):
                    throw DBusError(name: DBusError.invalidArgumentsName, message: error.description)
                }
                let changed: [DeviceRegistry.Device]
                do {
                    changed = try await devices.grant(
                        name: call.body.first?.string ?? "", adding: changes.add, removing: changes.remove)
                } catch {
                    throw DBusError(name: DBusError.failedName, message: "cannot store the devices: \(error)")
                }
                for device in changed { await hub.grant(device: device.tokenSHA256, types: device.types) }
                return [
                    .array(
                        elementSignature: "(ss)",
                        changed.map { .structure([.string($0.name), .string(DataType.text($0.types))]) })
                ]
            },
            ExportedInterface.Method("Revoke", in: [.init("name", "s")], out: [.init("count", "u")]) {
                (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let revoked: Set<String>
                do { revoked = try await devices.revoke(name: call.body.first?.string ?? "") } catch {
                    throw DBusError(name: DBusError.failedName, message: "cannot store the devices: \(error)")
                }
                await hub.close(devices: revoked)
                return [.uint32(UInt32(revoked.count))]
            },
        ]
        try await connection.export([ExportedInterface(name: interface, methods: methods)], at: path)
        do {
            try await connection.requestName(busName)
        } catch {
            await connection.unexport(path)
            throw DBusError(name: error.name, message: "another cyclelog-mirror is running (it owns \(busName))")
        }
    }
}
