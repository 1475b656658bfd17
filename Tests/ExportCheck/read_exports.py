#!/usr/bin/env python3
"""Reads files that `cyclelog export` wrote with independent decoders and prints what they found as JSON, for
the export tests to compare with the stored workout:
  read_exports.py fit FILE   Garmin's FIT SDK for Python (garmin-fit-sdk) and fitdecode
  read_exports.py tcx FILE   tcxreader
"""
import json
import sys


def read_fit(path):
    from garmin_fit_sdk import Decoder, Stream
    import fitdecode

    stream = Stream.from_file(path)
    decoder = Decoder(stream)
    result = {"isFIT": decoder.is_fit(), "integrity": decoder.check_integrity()}
    stream = Stream.from_file(path)
    messages, errors = Decoder(stream).read(convert_datetimes_to_dates=False, apply_scale_and_offset=True,
                                             convert_types_to_strings=True, expand_sub_fields=True)
    result["sdkErrors"] = [str(error) for error in errors]

    def plain(message):
        return {key: value for key, value in message.items() if isinstance(key, str)}

    result["records"] = [plain(m) for m in messages.get("record_mesgs", [])]
    result["events"] = [plain(m) for m in messages.get("event_mesgs", [])]
    result["laps"] = [plain(m) for m in messages.get("lap_mesgs", [])]
    result["sessions"] = [plain(m) for m in messages.get("session_mesgs", [])]
    result["activities"] = [plain(m) for m in messages.get("activity_mesgs", [])]
    result["devices"] = [plain(m) for m in messages.get("device_info_mesgs", [])]
    result["fileIds"] = [plain(m) for m in messages.get("file_id_mesgs", [])]
    result["workouts"] = [plain(m) for m in messages.get("workout_mesgs", [])]
    result["workoutSteps"] = [plain(m) for m in messages.get("workout_step_mesgs", [])]

    # fitdecode checks both CRCs and raises on a bad one.
    counts = {}
    balance = []
    with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE) as reader:
        for frame in reader:
            if frame.frame_type == fitdecode.FIT_FRAME_DATA:
                counts[frame.name] = counts.get(frame.name, 0) + 1
                if frame.name == "record":
                    field = frame.get_field("left_right_balance") if frame.has_field("left_right_balance") else None
                    balance.append(field.raw_value if field else None)
    result["fitdecodeCounts"] = counts
    # The raw left_right_balance byte of each record, as stored (bit 7: right pedal; low 7 bits: percent).
    result["fitdecodeBalance"] = balance
    return result


def read_tcx(path):
    from tcxreader.tcxreader import TCXReader

    # only_gps=False keeps trackpoints without a position (an indoor or sensor-only ride has none).
    exercise = TCXReader().read(path, only_gps=False)
    return {
        "sport": exercise.activity_type,
        "laps": [{"calories": lap.calories, "distanceMeters": lap.distance, "trackpoints": len(lap.trackpoints),
                  "lx": lap.lx_ext} for lap in exercise.laps],
        "trackpoints": [{"time": point.time.strftime("%Y-%m-%dT%H:%M:%SZ"), "distance": point.distance,
                         "heartRate": point.hr_value, "cadence": point.cadence,
                         "watts": point.tpx_ext.get("Watts"), "speed": point.tpx_ext.get("Speed")}
                        for point in exercise.trackpoints],
    }


def main():
    kind, path = sys.argv[1], sys.argv[2]
    result = read_fit(path) if kind == "fit" else read_tcx(path)
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
