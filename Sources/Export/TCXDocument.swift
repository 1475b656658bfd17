import Formats
import Workouts

/// A ride as Garmin Training Center XML (TCX v2): one Lap element per lap, with a trackpoint per second the timer
/// ran, power and speed in the ActivityExtension v2 (TPX and LX) elements, in the order the schema requires.
public enum TCXDocument {
    public static func encode(_ summary: WorkoutSummary, samples: [SecondSample]) -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2">
              <Activities>
                <Activity Sport="Biking">
                  <Id>\(UTCTime.formatSeconds(microseconds: summary.startMicroseconds))</Id>

            """
        let seconds = RideSecond.list(samples, startMicroseconds: summary.startMicroseconds).filter(\.sample.isRunning)
        for lap in summary.laps {
            let s = lap.statistics
            xml += "      <Lap StartTime=\"\(UTCTime.formatSeconds(microseconds: lap.startMicroseconds))\">\n"
            xml += element("TotalTimeSeconds", s.movingSeconds, 3, indent: 8)
            xml += element("DistanceMeters", s.distanceMeters, 2, indent: 8)
            xml += element("MaximumSpeed", s.maximumSpeedMetersPerSecond, 3, indent: 8)
            // TCX requires calories; with a power meter, kcal burned ≈ kJ of work (about 24 % efficiency).
            xml += element("Calories", (s.workJoules ?? 0) / 1000, 0, indent: 8)
            xml += heartRate("AverageHeartRateBpm", s.averageHeartRateBPM, indent: 8)
            xml += heartRate("MaximumHeartRateBpm", s.maximumHeartRateBPM, indent: 8)
            xml += "        <Intensity>Active</Intensity>\n"
            xml += element("Cadence", s.averageCadenceRPM.map { min($0, 254) }, 0, indent: 8)
            xml += "        <TriggerMethod>Manual</TriggerMethod>\n"
            xml += "        <Track>\n"
            for second in seconds
            where second.timeMicroseconds >= lap.startMicroseconds && second.timeMicroseconds < lap.endMicroseconds {
                let sample = second.sample
                xml += "          <Trackpoint>\n"
                xml += "            <Time>\(UTCTime.formatSeconds(microseconds: second.timeMicroseconds))</Time>\n"
                xml += element("DistanceMeters", second.distanceMeters, 2, indent: 12)
                xml += heartRate("HeartRateBpm", sample.heartRateBPM, indent: 12)
                xml += element("Cadence", sample.cadenceRPM.map { min($0, 254) }, 0, indent: 12)
                xml += extensions(
                    "TPX", [("Speed", sample.speedMetersPerSecond, 3), ("Watts", sample.powerWatts, 0)], indent: 12)
                xml += "          </Trackpoint>\n"
            }
            xml += "        </Track>\n"
            xml += extensions(
                "LX",
                [
                    ("AvgSpeed", s.averageSpeedMetersPerSecond, 3), ("AvgWatts", s.averagePowerWatts, 0),
                    ("MaxWatts", s.maximumPowerWatts, 0),
                ], indent: 8)
            xml += "      </Lap>\n"
        }
        xml += "      <Creator xsi:type=\"Device_t\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">"
        xml += "<Name>cyclelog</Name><UnitId>0</UnitId><ProductID>0</ProductID>"
        xml += "<Version><VersionMajor>1</VersionMajor><VersionMinor>0</VersionMinor></Version></Creator>\n"
        xml += "    </Activity>\n  </Activities>\n</TrainingCenterDatabase>\n"
        return xml
    }

    private static func number(_ value: Double, _ decimals: Int) -> String {
        JSONValue.rounded(value, decimals).rendered()
    }

    private static func element(_ name: String, _ value: Double?, _ decimals: Int, indent: Int) -> String {
        guard let value, value.isFinite else { return "" }
        return String(repeating: " ", count: indent) + "<\(name)>\(number(value, decimals))</\(name)>\n"
    }

    /// An ActivityExtension v2 element (TPX, LX) with the values that are known; nothing when none is.
    private static func extensions(_ kind: String, _ values: [(String, Double?, Int)], indent: Int) -> String {
        let known = values.compactMap { name, value, decimals in
            value.map { "<ns3:\(name)>\(number($0, decimals))</ns3:\(name)>" }
        }
        guard !known.isEmpty else { return "" }
        return String(repeating: " ", count: indent) + "<Extensions><ns3:\(kind)>" + known.joined()
            + "</ns3:\(kind)></Extensions>\n"
    }

    /// Heart rate is a positive byte in TCX: a value that rounds to 0 is left out.
    private static func heartRate(_ name: String, _ value: Double?, indent: Int) -> String {
        guard let value, value.isFinite, value.rounded() >= 1 else { return "" }
        return String(repeating: " ", count: indent)
            + "<\(name)><Value>\(number(min(value, 255), 0))</Value></\(name)>\n"
    }
}
