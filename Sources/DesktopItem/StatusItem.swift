import DBus
import RecorderInterface

/// The desktop item's two objects on the session bus, as values: the StatusNotifierItem (`org.kde.StatusNotifierItem`
/// at `/StatusNotifierItem`, the protocol KDE, XFCE, waybar and GNOME's AppIndicator extension host) and its menu
/// (`com.canonical.dbusmenu` at `/MenuBar`). `DesktopItem` exports them and keeps them equal to the face.
public enum StatusItem {
    public static let itemPath = "/StatusNotifierItem"
    public static let itemInterface = "org.kde.StatusNotifierItem"
    public static let menuPath = "/MenuBar"
    public static let menuInterface = "com.canonical.dbusmenu"
    public static let watcherName = "org.kde.StatusNotifierWatcher"
    public static let watcherPath = "/StatusNotifierWatcher"

    // MARK: The item

    /// Every property of the item for `face`.
    static func itemProperties(_ face: DesktopFace) -> [String: DBusValue] {
        let tooltip = face.tooltip
        let noPixmaps = DBusValue.array(elementSignature: "(iiay)", [])
        return [
            "Category": .string("ApplicationStatus"), "Id": .string("cyclelog"), "Title": .string(face.title),
            "Status": .string(face.status?.trainerMessage.isEmpty == false ? "NeedsAttention" : "Active"),
            "WindowId": .int32(0), "IconName": .string(""), "IconPixmap": pixmaps(face.icon),
            "OverlayIconName": .string(""), "OverlayIconPixmap": noPixmaps, "AttentionIconName": .string(""),
            "AttentionIconPixmap": pixmaps(face.icon), "AttentionMovieName": .string(""),
            "ToolTip": .structure([.string(""), noPixmaps, .string(tooltip.title), .string(tooltip.body)]),
            "ItemIsMenu": .boolean(true), "Menu": .objectPath(menuPath),
        ]
    }

    /// The signals that say which of the item's properties changed between `old` and `new` (hosts read them again
    /// on these; most do not follow `PropertiesChanged`).
    static func itemSignals(from old: [String: DBusValue], to new: [String: DBusValue]) -> [DBusMessage] {
        var members: [(String, [DBusValue])] = []
        if old["Title"] != new["Title"] { members.append(("NewTitle", [])) }
        if old["IconPixmap"] != new["IconPixmap"] { members.append(("NewIcon", [])) }
        if old["ToolTip"] != new["ToolTip"] { members.append(("NewToolTip", [])) }
        if old["Status"] != new["Status"], let status = new["Status"] { members.append(("NewStatus", [status])) }
        return members.map { .signal(path: itemPath, interface: itemInterface, member: $0.0, body: $0.1) }
    }

    static func itemInterfaceDescription() -> ExportedInterface {
        // A click opens the menu (`ItemIsMenu`); the activations are answered and do nothing.
        let position = [ExportedInterface.Argument("x", "i"), .init("y", "i")]
        return ExportedInterface(
            name: itemInterface,
            methods: [
                .init("ContextMenu", in: position) { _ in [] }, .init("Activate", in: position) { _ in [] },
                .init("SecondaryActivate", in: position) { _ in [] },
                .init("Scroll", in: [.init("delta", "i"), .init("orientation", "s")]) { _ in [] },
            ],
            properties: [
                .init("Category", "s"), .init("Id", "s"), .init("Title", "s"), .init("Status", "s"),
                .init("WindowId", "i"), .init("IconName", "s"), .init("IconPixmap", "a(iiay)"),
                .init("OverlayIconName", "s"), .init("OverlayIconPixmap", "a(iiay)"), .init("AttentionIconName", "s"),
                .init("AttentionIconPixmap", "a(iiay)"), .init("AttentionMovieName", "s"),
                .init("ToolTip", "(sa(iiay)ss)"), .init("ItemIsMenu", "b"), .init("Menu", "o"),
            ],
            signals: [
                .init("NewTitle", []), .init("NewIcon", []), .init("NewAttentionIcon", []),
                .init("NewOverlayIcon", []), .init("NewToolTip", []), .init("NewStatus", [.init("status", "s")]),
            ])
    }

    // MARK: The icon

    /// The icon as ARGB32 pixmaps (network byte order), 22 and 44 pixels: a disc, red while recording, amber when
    /// paused, grey while waiting, a grey ring with no recorder.
    static func pixmaps(_ icon: DesktopFace.Icon) -> DBusValue {
        switch icon {
        case .recording: recordingPixmaps
        case .paused: pausedPixmaps
        case .waiting: waitingPixmaps
        case .noRecorder: noRecorderPixmaps
        }
    }

    // Drawn once: the item's properties are made again at each status change (twice a second while riding).
    private static let recordingPixmaps = drawPixmaps(.recording)
    private static let pausedPixmaps = drawPixmaps(.paused)
    private static let waitingPixmaps = drawPixmaps(.waiting)
    private static let noRecorderPixmaps = drawPixmaps(.noRecorder)

    private static func drawPixmaps(_ icon: DesktopFace.Icon) -> DBusValue {
        .array(
            elementSignature: "(iiay)",
            [22, 44].map { size in
                .structure([.int32(Int32(size)), .int32(Int32(size)), .bytes(disc(size: size, icon: icon))])
            })
    }

    static func disc(size: Int, icon: DesktopFace.Icon) -> [UInt8] {
        let (red, green, blue): (UInt8, UInt8, UInt8) =
            switch icon {
            case .recording: (0xD9, 0x30, 0x25)
            case .paused: (0xE8, 0x9B, 0x1A)
            case .waiting, .noRecorder: (0x8A, 0x8F, 0x98)
            }
        let centre = Double(size) / 2, radius = Double(size) / 2 - 1
        var pixels: [UInt8] = []
        pixels.reserveCapacity(size * size * 4)
        for y in 0..<size {
            for x in 0..<size {
                let distance =
                    ((Double(x) + 0.5 - centre) * (Double(x) + 0.5 - centre)
                    + (Double(y) + 0.5 - centre) * (Double(y) + 0.5 - centre)).squareRoot()
                // Edge pixels half-covered are half transparent; with no recorder only a ring is drawn.
                var coverage = min(max(radius - distance + 0.5, 0), 1)
                if icon == .noRecorder { coverage *= min(max(distance - radius * 0.6 + 0.5, 0), 1) }
                pixels += [UInt8((coverage * 255).rounded()), red, green, blue]
            }
        }
        return pixels
    }

    // MARK: The menu

    /// The menu as dbusmenu items: ids from 1 in the order shown, a submenu's entries after the entry itself.
    struct MenuLayout: Sendable, Equatable {
        struct Item: Sendable, Equatable {
            var id: Int32
            var entry: DesktopFace.MenuEntry
            var children: [Item]
        }
        var items: [Item]

        init(_ entries: [DesktopFace.MenuEntry]) {
            var next: Int32 = 1
            func items(_ entries: [DesktopFace.MenuEntry]) -> [Item] {
                entries.map { entry in
                    let id = next
                    next += 1
                    return Item(id: id, entry: entry, children: items(entry.children))
                }
            }
            self.items = items(entries)
        }

        /// The item with `id`, 0 being the root; nil for an id this menu does not have.
        func item(_ id: Int32) -> Item? {
            if id == 0 { return Item(id: 0, entry: .init(label: "", enabled: true), children: items) }
            func find(_ items: [Item]) -> Item? {
                for item in items {
                    if item.id == id { return item }
                    if let found = find(item.children) { return found }
                }
                return nil
            }
            return find(items)
        }

        /// An item's properties (only those named, when `names` is not empty).
        static func properties(_ item: Item, names: [String] = []) -> DBusValue {
            // The root has no label of its own, only its children.
            var pairs: [(String, DBusValue)] =
                item.id == 0
                ? []
                : [
                    // dbusmenu reads `_` as the mnemonic's mark; a label's own is doubled.
                    ("label", .string(item.entry.label.replacingOccurrences(of: "_", with: "__"))),
                    ("enabled", .boolean(item.entry.enabled)), ("visible", .boolean(true)),
                ]
            if !item.children.isEmpty { pairs.append(("children-display", .string("submenu"))) }
            if !names.isEmpty { pairs = pairs.filter { names.contains($0.0) } }
            return .properties(pairs)
        }

        /// `(ia{sv}av)`: an item with its children to `depth` levels (-1: all).
        static func layout(_ item: Item, depth: Int, names: [String]) -> DBusValue {
            let children =
                depth == 0
                ? [] : item.children.map { DBusValue.variant(layout($0, depth: depth - 1, names: names)) }
            return .structure([
                .int32(item.id), Self.properties(item, names: names), .array(elementSignature: "v", children),
            ])
        }
    }

    /// The menu's interface: its layout read from `layout`, its clicks given to `clicked` with the item's id.
    static func menuInterfaceDescription(
        layout: @escaping @Sendable () async -> (revision: UInt32, menu: MenuLayout),
        clicked: @escaping @Sendable (Int32) async -> Void
    ) -> ExportedInterface {
        return ExportedInterface(
            name: menuInterface,
            methods: [
                .init(
                    "GetLayout",
                    in: [.init("parentId", "i"), .init("recursionDepth", "i"), .init("propertyNames", "as")],
                    out: [.init("revision", "u"), .init("layout", "(ia{sv}av)")]
                ) { call throws(DBusError) in
                    let (revision, menu) = await layout()
                    let parent = Int32(clamping: call.body.first?.integer ?? 0)
                    let depth = Int(call.body.dropFirst().first?.integer ?? -1)
                    guard let item = menu.item(parent) else { throw noSuchItem(parent) }
                    let names = call.body.dropFirst(2).first?.stringArray ?? []
                    return [.uint32(revision), MenuLayout.layout(item, depth: depth, names: names)]
                },
                .init(
                    "GetGroupProperties", in: [.init("ids", "ai"), .init("propertyNames", "as")],
                    out: [.init("properties", "a(ia{sv})")]
                ) { call in
                    let menu = await layout().menu
                    let names = call.body.dropFirst().first?.stringArray ?? []
                    var ids: [Int32] = []
                    if case .array(_, let values)? = call.body.first {
                        ids = values.compactMap { $0.integer.map { Int32(clamping: $0) } }
                    }
                    let items = ids.compactMap { menu.item($0) }
                    return [
                        .array(
                            elementSignature: "(ia{sv})",
                            items.map { .structure([.int32($0.id), MenuLayout.properties($0, names: names)]) })
                    ]
                },
                .init("GetProperty", in: [.init("id", "i"), .init("name", "s")], out: [.init("value", "v")]) {
                    call throws(DBusError) in
                    let id = Int32(clamping: call.body.first?.integer ?? -1)
                    guard let item = await layout().menu.item(id),
                        let value = MenuLayout.properties(item, names: [call.body.last?.string ?? ""]).dictionary?
                            .values.first
                    else { throw noSuchItem(id) }
                    return [value]
                },
                .init(
                    "Event",
                    in: [.init("id", "i"), .init("eventId", "s"), .init("data", "v"), .init("timestamp", "u")]
                ) { call in
                    if call.body.dropFirst().first?.string == "clicked" {
                        await clicked(Int32(clamping: call.body.first?.integer ?? 0))
                    }
                    return []
                },
                .init("EventGroup", in: [.init("events", "a(isvu)")], out: [.init("idErrors", "ai")]) { call in
                    if case .array(_, let events)? = call.body.first {
                        for case .structure(let fields) in events where fields.count == 4 {
                            if fields[1].string == "clicked" { await clicked(Int32(clamping: fields[0].integer ?? 0)) }
                        }
                    }
                    return [.array(elementSignature: "i", [])]
                },
                .init("AboutToShow", in: [.init("id", "i")], out: [.init("needUpdate", "b")]) { _ in [.boolean(false)]
                },
                .init(
                    "AboutToShowGroup", in: [.init("ids", "ai")],
                    out: [.init("updatesNeeded", "ai"), .init("idErrors", "ai")]
                ) { _ in [.array(elementSignature: "i", []), .array(elementSignature: "i", [])] },
            ],
            properties: [
                .init("Version", "u"), .init("TextDirection", "s"), .init("Status", "s"), .init("IconThemePath", "as"),
            ],
            signals: [
                .init("ItemsPropertiesUpdated", [.init("updatedProps", "a(ia{sv})"), .init("removedProps", "a(ias)")]),
                .init("LayoutUpdated", [.init("revision", "u"), .init("parent", "i")]),
                .init("ItemActivationRequested", [.init("id", "i"), .init("timestamp", "u")]),
            ])
    }

    static func noSuchItem(_ id: Int32) -> DBusError {
        DBusError(name: DBusError.invalidArgumentsName, message: "the menu has no item \(id)")
    }

    static let menuProperties: [String: DBusValue] = [
        "Version": .uint32(3), "TextDirection": .string("ltr"), "Status": .string("normal"),
        "IconThemePath": .strings([]),
    ]
}
