/// A D-Bus interface this process serves on an object: its methods (answered by async handlers) and its
/// read-only properties (values held by the connection and changed with `setProperties`, which also emits
/// `PropertiesChanged`). Introspection XML is generated from it.
public struct ExportedInterface: Sendable {
    public struct Argument: Sendable {
        public var name: String
        public var signature: String

        public init(_ name: String, _ signature: String) {
            self.name = name
            self.signature = signature
        }
    }

    /// What a method handler is given: who called and with what.
    public struct Call: Sendable {
        /// The caller's unique bus name, for checking who may call.
        public var sender: String
        public var path: String
        public var body: [DBusValue]
    }

    public struct Method: Sendable {
        public var name: String
        public var inArguments: [Argument]
        public var outArguments: [Argument]
        /// Calls are handled one at a time, in the order they arrived, each after the previous one was answered;
        /// otherwise each call runs as soon as it arrives, and two calls that arrive together may start in either
        /// order.
        public var inArrivalOrder: Bool
        public var handler: @Sendable (Call) async throws(DBusError) -> [DBusValue]

        public init(
            _ name: String, in inArguments: [Argument] = [], out outArguments: [Argument] = [],
            inArrivalOrder: Bool = false,
            handler: @escaping @Sendable (Call) async throws(DBusError) -> [DBusValue]
        ) {
            self.name = name
            self.inArguments = inArguments
            self.outArguments = outArguments
            self.inArrivalOrder = inArrivalOrder
            self.handler = handler
        }
    }

    public struct Property: Sendable {
        public var name: String
        public var signature: String

        public init(_ name: String, _ signature: String) {
            self.name = name
            self.signature = signature
        }
    }

    /// A signal the object emits (with `DBusConnection.send`), declared for introspection.
    public struct Signal: Sendable {
        public var name: String
        public var arguments: [Argument]

        public init(_ name: String, _ arguments: [Argument]) {
            self.name = name
            self.arguments = arguments
        }
    }

    public var name: String
    public var methods: [Method]
    public var properties: [Property]
    public var signals: [Signal]

    public init(name: String, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    /// This interface's `<interface>` element.
    var introspectionXML: String {
        var xml = "  <interface name=\"\(name)\">\n"
        for method in methods {
            xml += "    <method name=\"\(method.name)\">\n"
            for argument in method.inArguments {
                xml += "      <arg name=\"\(argument.name)\" type=\"\(argument.signature)\" direction=\"in\"/>\n"
            }
            for argument in method.outArguments {
                xml += "      <arg name=\"\(argument.name)\" type=\"\(argument.signature)\" direction=\"out\"/>\n"
            }
            xml += "    </method>\n"
        }
        for property in properties {
            xml += "    <property name=\"\(property.name)\" type=\"\(property.signature)\" access=\"read\"/>\n"
        }
        for signal in signals {
            xml += "    <signal name=\"\(signal.name)\">\n"
            for argument in signal.arguments {
                xml += "      <arg name=\"\(argument.name)\" type=\"\(argument.signature)\"/>\n"
            }
            xml += "    </signal>\n"
        }
        xml += "  </interface>\n"
        return xml
    }

    /// `org.freedesktop.DBus.ObjectManager`, which an object manager's root answers.
    static let objectManagerXML = """
          <interface name="org.freedesktop.DBus.ObjectManager">
            <method name="GetManagedObjects">
              <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
            </method>
            <signal name="InterfacesAdded">
              <arg name="object" type="o"/>
              <arg name="interfaces" type="a{sa{sv}}"/>
            </signal>
            <signal name="InterfacesRemoved">
              <arg name="object" type="o"/>
              <arg name="interfaces" type="as"/>
            </signal>
          </interface>

        """

    /// The standard interfaces every exported object answers.
    static let standardXML = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface" type="s" direction="in"/>
              <arg name="name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface" type="s" direction="in"/>
              <arg name="name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface" type="s"/>
              <arg name="changed" type="a{sv}"/>
              <arg name="invalidated" type="as"/>
            </signal>
          </interface>

        """
}
