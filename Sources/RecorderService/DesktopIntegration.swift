import Formats
import LiveRecording
import RecorderInterface
import Workouts

/// The files that let a desktop start rides: a Desktop Entry with one action per suggested workout (launchers
/// offer "Ramp test", "Endurance 1 h", …) that is D-Bus activatable, and the session bus's activation file
/// that starts a waiting recorder for it (Desktop Entry Specification, "D-Bus Activation"; the name fixes the
/// object path to /org/cyclelog/Recorder, where the recorder serves org.freedesktop.Application).
public enum DesktopIntegration {
    /// The file names: the desktop file's is the bus name.
    public static let desktopFileName = RecorderControl.busName + ".desktop"
    public static let serviceFileName = RecorderControl.busName + ".service"

    /// The actions besides the presets' `start-ID`, with their titles.
    public static let controlActions = [
        ("pause", "Pause the ride"), ("resume", "Resume the ride"), ("lap", "Lap"),
        ("end", "End and save the ride"),
    ]

    /// `org.cyclelog.Recorder.desktop` for the presets, its Exec lines running `executable`.
    public static func desktopEntry(presets: [WorkoutPreset], executable: String) -> String {
        let actions = presets.map { "start-" + $0.id } + controlActions.map(\.0)
        var text = """
            [Desktop Entry]
            Type=Application
            Name=cyclelog
            GenericName=Ride recorder
            Comment=Record a ride from Bluetooth cycling sensors (power, cadence, speed, heart rate)
            Exec=\(DesktopEntryText.quoted(executable)) record --wait
            Terminal=false
            DBusActivatable=true
            Categories=Utility;
            Keywords=cycling;bike;power;workout;
            Actions=\(actions.joined(separator: ";"));

            """
        for preset in presets {
            text += """

                [Desktop Action start-\(preset.id)]
                Name=\(DesktopEntryText.value(preset.title))
                Exec=\(DesktopEntryText.quoted(executable)) start \(preset.id)

                """
        }
        for (action, title) in controlActions {
            text += """

                [Desktop Action \(action)]
                Name=\(title)
                Exec=\(DesktopEntryText.quoted(executable)) \(action)

                """
        }
        return text
    }

    /// `org.cyclelog.Recorder.service` for the session bus: activation starts a recorder that waits.
    public static func dbusService(executable: String) -> String {
        """
        [D-BUS Service]
        Name=\(RecorderControl.busName)
        Exec=\(DesktopEntryText.quoted(executable)) record --wait

        """
    }
}
