/// A D-Bus match rule for signals: sent to the bus daemon (`AddMatch`) so that it routes the signals to us, and
/// applied again locally so that each stream gets only its own signals (the daemon also sends unsolicited ones,
/// such as `NameAcquired`, and signals matching other streams' rules).
public struct MatchRule: Sendable, Hashable {
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: String?
    /// Matches the path itself and every path below it.
    public var pathNamespace: String?
    /// The first body argument, when it is a string.
    public var arg0: String?

    public init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: String? = nil,
        pathNamespace: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule in the daemon's syntax, e.g. `type='signal',sender='org.bluez',path_namespace='/org/bluez'`.
    public var text: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            // Values here are bus names, paths and member names, which cannot contain quotes.
            if let value { parts.append("\(key)='\(value)'") }
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// Whether a signal matches. A well-known sender name cannot be checked here (messages carry the owner's
    /// unique name); the daemon has already checked it when it routed the signal.
    public func matches(_ message: DBusMessage) -> Bool {
        guard message.kind == .signal else { return false }
        if let sender, sender.hasPrefix(":"), message.sender != sender { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let namespace = pathNamespace, let messagePath = message.path {
            let inside =
                messagePath == namespace || namespace == "/" || messagePath.hasPrefix(namespace + "/")
            if !inside { return false }
        } else if pathNamespace != nil {
            return false
        }
        if let arg0, message.body.first?.string != arg0 { return false }
        return true
    }
}
