extension Duration {
    /// In seconds, as a `Double` (what the rules' figures and the timings are in).
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
