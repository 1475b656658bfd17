import Formats
import Foundation

/// The autostart file that has the desktop session start the item at login (freedesktop's Desktop Application
/// Autostart Specification): `$XDG_CONFIG_HOME/autostart/org.cyclelog.Desktop.desktop`.
public enum Autostart {
    public static let fileName = "org.cyclelog.Desktop.desktop"

    /// Where the file goes for this user.
    public static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let configuration =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return configuration + "/autostart/" + fileName
    }

    /// The file, starting `executable` with `arguments`.
    public static func entry(executable: String, arguments: [String]) -> String {
        let command = ([executable] + arguments).map(DesktopEntryText.quoted).joined(separator: " ")
        return """
            [Desktop Entry]
            Type=Application
            Name=cyclelog ride status
            GenericName=Ride status
            Comment=The ride being recorded, in the status area and in notifications
            Exec=\(command)
            Icon=media-record
            Terminal=false
            NoDisplay=true
            X-GNOME-Autostart-enabled=true

            """
    }
}
