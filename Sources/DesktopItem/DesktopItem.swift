import DBus
import Foundation
import RecorderInterface
import Workouts

/// The desktop item while it runs: follows the recorder (`RecorderLink`, on the recorder's bus), keeps the status
/// item on the session bus equal to `DesktopFace`, registers it with the status area (again when the area
/// restarts), puts up the face's notifications (one, replaced in place) and passes the menu's and the
/// notifications' controls to the recorder. Carries out; decides nothing (the face does).
public actor DesktopItem {
    /// The desktop's session bus: the item, its menu and the notifications.
    let session: DBusConnection
    let link: RecorderLink
    var face: DesktopFace
    let readSaved: @Sendable (Int64) async -> SavedRide?
    /// Tells the rider (standard error): why something is not shown, once per reason.
    let say: @Sendable (String) -> Void

    /// The item's properties as last published.
    var itemValues: [String: DBusValue] = [:]
    var menu = StatusItem.MenuLayout([])
    var menuRevision: UInt32 = 1
    /// The notification on screen (0: none), to be replaced by the next; its actions by key.
    var notificationId: UInt32 = 0
    var notificationActions: [String: RecorderCommand] = [:]
    /// The notifications to put up, one after the other: each replaces the one before it, whose id the daemon
    /// gives only in its answer.
    let notifications: AsyncStream<DesktopNotification>
    let notificationSink: AsyncStream<DesktopNotification>.Continuation
    /// What was said once: no status area, no notification daemon.
    var told: Set<String> = []
    var saving: Task<Void, Never>?

    public init(
        session: DBusConnection, link: RecorderLink, types: Set<DataType>,
        readSaved: @escaping @Sendable (Int64) async -> SavedRide?, say: @escaping @Sendable (String) -> Void
    ) {
        self.session = session
        self.link = link
        self.face = DesktopFace(types: types)
        self.readSaved = readSaved
        self.say = say
        (notifications, notificationSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
    }

    /// The bus name the item is registered under: the specification's `org.kde.StatusNotifierItem-PID-ID`.
    public static var busName: String { "org.kde.StatusNotifierItem-\(getpid())-1" }

    /// Serves the item until the task is cancelled or the session bus goes away.
    public func run() async throws(DBusError) {
        itemValues = StatusItem.itemProperties(face)
        menu = StatusItem.MenuLayout(face.menu)
        try await session.export(
            [StatusItem.itemInterfaceDescription()], at: StatusItem.itemPath,
            properties: [StatusItem.itemInterface: itemValues])
        try await session.export(
            [
                StatusItem.menuInterfaceDescription(
                    layout: { [weak self] in await self?.currentMenu() ?? (0, StatusItem.MenuLayout([])) },
                    clicked: { [weak self] id in await self?.clicked(id) })
            ], at: StatusItem.menuPath, properties: [StatusItem.menuInterface: StatusItem.menuProperties])
        try await session.requestName(Self.busName)
        let signals = try await session.signals(matchingAny: [
            MatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                arg0: StatusItem.watcherName),
            // Only the daemon's: a button pressed is a control sent to the recorder.
            MatchRule(
                sender: Notifications.name, interface: Notifications.interface, member: "ActionInvoked",
                path: Notifications.path),
            MatchRule(
                sender: Notifications.name, interface: Notifications.interface, member: "NotificationClosed",
                path: Notifications.path),
        ])
        await register()
        let link = self.link
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await link.run(connected: { _ in }, lost: { [weak self] in await self?.sayOnce($0) }) {
                    [weak self] update in await self?.apply(update)
                }
            }
            group.addTask { [weak self] in
                for await signal in signals { await self?.handle(signal) }
            }
            let notifications = self.notifications
            group.addTask { [weak self] in
                for await notification in notifications { await self?.put(notification) }
            }
            // The item ends with the session bus (the desktop logged out: the signals end), or when cancelled.
            await group.next()
            group.cancelAll()
        }
        saving?.cancel()
    }

    // MARK: The recorder

    func apply(_ update: RecorderUpdate) async {
        let effects = face.apply(update)
        await publish()
        for effect in effects {
            switch effect {
            case .notify(let notification): notify(notification)
            case .readSaved(let workoutId): readWhenSaved(workoutId)
            case .forgetSaved: saving?.cancel()
            }
        }
    }

    /// Waits for ride `workoutId` to be in the store (the recorder saves it 30 s after its End, or at once), then
    /// says it; gives up after 2 minutes, saying so once (a ride whose save failed is said by the recorder itself;
    /// a recorder that writes another database than the item reads is the likely cause).
    private func readWhenSaved(_ workoutId: Int64) {
        saving?.cancel()
        let readSaved = self.readSaved
        saving = Task { [weak self] in
            for _ in 0..<120 {
                guard (try? await Task.sleep(for: .seconds(1))) != nil else { return }
                if let ride = await readSaved(workoutId) {
                    await self?.savedRide(ride)
                    return
                }
            }
            await self?.sayOnce(
                "ride \(workoutId) did not appear saved in the database this item reads within 2 minutes: is it the "
                    + "recorder's? (`--db PATH`, as the recorder's `--db`)", key: "not saved here")
        }
    }

    private func savedRide(_ ride: SavedRide) {
        notify(face.saved(ride))
    }

    /// The item's properties and menu made equal to the face; the hosts told what changed.
    private func publish() async {
        let values = StatusItem.itemProperties(face)
        if values != itemValues {
            let signals = StatusItem.itemSignals(from: itemValues, to: values)
            itemValues = values
            try? await session.setProperties(values, interface: StatusItem.itemInterface, path: StatusItem.itemPath)
            for signal in signals { _ = try? await session.send(signal) }
        }
        let newMenu = StatusItem.MenuLayout(face.menu)
        if newMenu != menu {
            menu = newMenu
            menuRevision &+= 1
            _ = try? await session.send(
                .signal(
                    path: StatusItem.menuPath, interface: StatusItem.menuInterface, member: "LayoutUpdated",
                    body: [.uint32(menuRevision), .int32(0)]))
        }
    }

    func currentMenu() -> (revision: UInt32, menu: StatusItem.MenuLayout) { (menuRevision, menu) }

    // MARK: The status area

    /// Registers the item with the status area's watcher; says once when there is none.
    private func register() async {
        do {
            _ = try await session.call(
                destination: StatusItem.watcherName, path: StatusItem.watcherPath,
                interface: StatusItem.watcherName, member: "RegisterStatusNotifierItem", [.string(Self.busName)],
                timeout: .seconds(5))
            told.remove("no status area")
            say("shown in the status area (\(StatusItem.watcherName))")
        } catch {
            sayOnce(
                "no status area runs on this desktop (no \(StatusItem.watcherName): \(error.message)); the ride is "
                    + "shown in notifications, and in the status area once one starts",
                key: "no status area")
        }
    }

    private func handle(_ signal: DBusMessage) async {
        switch signal.member {
        case "NameOwnerChanged":
            // A status area that starts (or restarts) knows nothing of the items before it.
            if let owner = signal.body.dropFirst(2).first?.string, !owner.isEmpty { await register() }
        case "ActionInvoked":
            guard signal.body.first?.integer == Int64(notificationId), let key = signal.body.last?.string,
                let command = notificationActions[key]
            else { return }
            await send(command)
        case "NotificationClosed":
            if signal.body.first?.integer == Int64(notificationId) {
                notificationId = 0
                notificationActions = [:]
            }
        default: return
        }
    }

    // MARK: Controls

    func clicked(_ id: Int32) async {
        guard let command = menu.item(id)?.entry.command else { return }
        await send(command)
    }

    /// Asks the recorder for `command`, expecting the ride as the desktop last saw it (a menu shown before a
    /// change is refused as stale, not applied to another ride); a refusal is put up in words. An undo names its
    /// action by number, which no later control changes.
    private func send(_ command: RecorderCommand) async {
        let isUndo = if case .undo = command { true } else { false }
        let expect = isUndo ? 0 : face.status?.controlSequence ?? 0
        do {
            _ = try await link.control(requestId: "desktop-" + UUID().uuidString, command, expect: expect)
        } catch {
            notify(
                DesktopNotification(
                    summary: "Not done: \(command.name)",
                    body: error.message.isEmpty ? error.name : error.message, actions: [], urgent: true))
        }
    }

    // MARK: Notifications

    private func notify(_ notification: DesktopNotification) {
        notificationSink.yield(notification)
    }

    private func put(_ notification: DesktopNotification) async {
        do {
            notificationId = try await Notifications.notify(
                notification, replacing: notificationId, on: session)
            notificationActions = Dictionary(
                notification.actions.map { ($0.key, $0.command) }, uniquingKeysWith: { first, _ in first })
            told.remove("no notifications")
        } catch {
            sayOnce(
                "no notification daemon answers on this desktop (\(error.message)): the ride is shown in the "
                    + "status area only", key: "no notifications")
        }
    }

    private func sayOnce(_ text: String, key: String? = nil) {
        guard told.insert(key ?? text).inserted else { return }
        say(text)
    }
}

/// `org.freedesktop.Notifications`, the desktop's notification daemon.
enum Notifications {
    static let name = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    static let interface = "org.freedesktop.Notifications"

    /// Puts up `notification` in place of notification `replacing` (0: a new one); its id.
    static func notify(_ notification: DesktopNotification, replacing: UInt32, on bus: DBusConnection)
        async throws(DBusError) -> UInt32
    {
        let reply = try await bus.call(
            destination: name, path: path, interface: interface, member: "Notify",
            [
                .string("cyclelog"), .uint32(replacing), .string(""), .string(notification.summary),
                .string(notification.body), .strings(notification.actions.flatMap { [$0.key, $0.label] }),
                .properties([
                    ("urgency", .byte(notification.urgent ? 2 : 1)), ("category", .string("x-cyclelog.ride")),
                    ("desktop-entry", .string("org.cyclelog.Recorder")),
                ]),
                // An urgent one stays until read; the others go after 10 s, as the daemon would.
                .int32(notification.urgent ? 0 : -1),
            ], timeout: .seconds(5))
        guard case .uint32(let id)? = reply.first else {
            throw DBusError(name: DBusError.failedName, message: "the notification daemon did not answer with an id")
        }
        return id
    }
}
