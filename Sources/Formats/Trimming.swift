extension Substring {
    /// The text without the spaces at either end (a header's list item, a word of a comma-separated list), without
    /// Foundation.
    public var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
