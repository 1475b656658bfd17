import StructuredWorkouts
import TrainerControl
import WorkoutStore
import Workouts

/// The recorder's work on a structured workout, carried out for its `WorkoutGuide`: the workout put into the
/// journal when the ride opens (so that the journal alone rebuilds its targets), the player moved each flush by
/// the ride's moving time and distance, its targets asked of the trainer, its words told, the rider's player
/// controls journalled, and a guided test's result said once the ride is saved.
extension LiveRecorder {
    /// A workout chosen for the next ride: `record --workout`, or a Start's `workout=`.
    public struct WorkoutChoice: Sendable {
        public var id: String
        public var planned: PlannedWorkout
        public var intensityPercent: Int

        public init(id: String, planned: PlannedWorkout, intensityPercent: Int = 100) {
            self.id = id
            self.planned = planned
            self.intensityPercent = intensityPercent
        }
    }

    /// The ride opened: its workout (its Start's, else the recorder's own) goes into the journal and is followed.
    /// A Start's was checked when it was taken; read again here, with the FTP in force when the ride opens (an
    /// armed start opens at the first pedal stroke).
    func openWorkout(_ request: StartRequest) async {
        var choice = options.workout
        if let id = request.workout {
            do throws(StartRefusal) {
                choice = try await chooseWorkout(id)
            } catch {
                if case .refused(let reason) = error { tellRider(reason) }
                choice = nil
            }
        }
        guard let choice else {
            guide = nil
            return
        }
        await record(RideEvent(timeMicroseconds: now(), .setting(.workout(choice.planned))))
        if choice.intensityPercent != 100 {
            await record(
                RideEvent(timeMicroseconds: now(), .setting(.player(.intensity(percent: choice.intensityPercent)))))
        }
        guide = WorkoutGuide(
            id: choice.id, planned: choice.planned, intensityPercent: choice.intensityPercent,
            endsWhenPedallingStops: request.plan.fitnessTest == .ramp)
        if choice.planned.workout.needsFTP, choice.planned.ftpWatts == nil {
            tellRider(
                "no FTP is known: the steps in % of FTP have no target (`cyclelog ftp set WATTS`, or `--ftp`)")
        }
        await performGuide(guide?.advance(movingSeconds: 0, distanceMeters: 0, cadenceRPM: nil) ?? [])
    }

    /// Resolves a Start's `workout=` from the library, with the FTP in force.
    func chooseWorkout(_ id: String) async throws(StartRefusal) -> WorkoutChoice {
        switch await store.plannedWorkout(id, at: now()) {
        case .success(let planned): return WorkoutChoice(id: id, planned: planned)
        case .failure(let refusal): throw refusal
        }
    }

    /// Skip, back, extend or the intensity, from the keyboard, D-Bus or the phone; why not, or nil.
    public func player(_ control: PlayerControl) async -> String? {
        guard controller.isRiding, guide != nil else { return "no structured workout is being ridden" }
        await record(RideEvent(timeMicroseconds: now(), .setting(.player(control))))
        await performGuide(guide?.apply(control) ?? [])
        statusUpdates.publish(status())
        return nil
    }

    /// Each flush: the player moved on by the ride's moving time and distance.
    func guideTick() async {
        guard guide != nil, controller.isRiding else { return }
        let status = controller.status(at: clock.rideMicroseconds(), sensors: [])
        guard status.state == "running" else { return }
        await performGuide(
            guide?.advance(
                movingSeconds: status.movingSeconds, distanceMeters: status.distanceMeters,
                cadenceRPM: status.cadenceRPM) ?? [])
    }

    /// A lap press ends an open step.
    func guideLap() async { await performGuide(guide?.lapPressed() ?? []) }

    func performGuide(_ actions: [WorkoutGuide.Action]) async {
        for action in actions {
            switch action {
            case .steer(let ask):
                // No trainer (yet): the targets are shown, and asked again once one connects.
                if trainerControl.refusal(of: ask) != nil {
                    guide?.trainerRefused()
                } else if let refusal = await steer(ask) {
                    guide?.trainerRefused()
                    tellRider(refusal)
                }
            case .tell(let words): tellRider(words)
            case .end(let words):
                tellRider(words)
                await control(.end)
            }
        }
    }

    func tellRider(_ words: String) {
        controller.message = words
        announcements.publish(.notice(words))
    }

    /// After a guided test is saved: the FTP it gives, and whether it is the FTP in force now.
    func sayTestResult(_ summary: WorkoutSummary) async {
        guard summary.plan.fitnessTest != nil, let words = await store.testResult(summary.id)
        else { return }
        announcements.publish(.notice(words))
    }
}
