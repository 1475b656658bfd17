import Foundation

/// How a Desktop Entry file (freedesktop's Desktop Entry Specification) writes a value and an Exec argument: the
/// recorder's desktop actions and the desktop item's autostart file both write them.
public enum DesktopEntryText {
    /// A Desktop Entry string value: no line breaks, `\` escaped.
    public static func value(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: " ")
            .replacingOccurrences(of: "\r", with: " ")
    }

    /// An Exec argument, quoted when it needs to be (a path with a space): the specification reserves space, tab,
    /// line breaks and `"'\><~|&;$*?#()` and the backtick; `,` `=` `:` are plain.
    public static func quoted(_ argument: String) -> String {
        let plain = argument.allSatisfy { $0.isLetter || $0.isNumber || "/._-+,=:".contains($0) }
        guard !plain else { return argument }
        // Inside quotes `"`, `` ` ``, `$` and `\` take a backslash, and the string value doubles every backslash
        // again (the specification's four backslashes for one); `%` is a field code unless doubled.
        let escaped = argument.map { character -> String in
            switch character {
            case "\\": "\\\\\\\\"
            case "\"", "`", "$": "\\\\" + String(character)
            case "%": "%%"
            default: String(character)
            }
        }.joined()
        return "\"\(escaped)\""
    }
}
