/// The shared store's schema in PostgreSQL: named migrations, applied in order by `cyclelog-sync init` and recorded
/// in `cyclelog_migration`; append-only, never edited once they have shipped (as the local ones). Docs/guide/sync.md, "Rides on
/// every machine" documents the tables for anyone who queries them.
public enum ServerSchema {
    public struct Migration: Sendable {
        public var name: String
        /// One statement each: the extended query protocol takes one at a time.
        public var statements: [String]
    }

    /// Serialises two `init`s against one server (a transaction-level advisory lock; any number, the same for all).
    static let lockKey = 0x6379_636C_656C_6F67  // "cyclelog"

    /// The migrations a server that has `applied` lacks, in order; a server with a migration this program does not
    /// know was made by a newer cyclelog-sync, and is refused.
    static func missing(applied: [String]) throws(SyncError) -> [Migration] {
        let known = Set(migrations.map(\.name))
        if let newer = applied.first(where: { !known.contains($0) }) {
            throw SyncError(
                .schema,
                "the shared store's schema was made by a newer cyclelog-sync (it has \"\(newer)\"): update this one")
        }
        return migrations.filter { !applied.contains($0.name) }
    }

    public static let migrations: [Migration] = [
        Migration(
            name: "v1 riders, collectors, rides, conflicts, the push rule",
            statements: [
                """
                CREATE TABLE rider (
                    id uuid PRIMARY KEY,
                    name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                -- A database that records or imports rides (a box by the trainer, a laptop), named by its host.
                CREATE TABLE collector (
                    id uuid PRIMARY KEY,
                    name text NOT NULL,
                    rider_id uuid NOT NULL REFERENCES rider (id),
                    first_seen timestamptz NOT NULL DEFAULT now(),
                    last_seen timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                -- One row per ride, at its newest version. A deleted ride keeps its row as a tombstone (deleted,
                -- no content), so that no old copy brings it back.
                CREATE TABLE ride (
                    sync_identifier uuid PRIMARY KEY,
                    rider_id uuid NOT NULL REFERENCES rider (id),
                    version integer NOT NULL CHECK (version >= 1),
                    -- SHA-256 of `journal` (its UTF-8 text) or of `fit_file`, lowercase hex; NULL for a tombstone.
                    content_digest text CHECK (content_digest ~ '^[0-9a-f]{64}$'),
                    deleted boolean NOT NULL DEFAULT false,
                    -- Who pushed this version.
                    collector_id uuid NOT NULL REFERENCES collector (id),
                    -- `cyclelog show ID --journal`, for a recorded or replayed ride.
                    journal text,
                    -- The file an imported ride came from, byte for byte, and which session of it the ride is.
                    fit_file bytea,
                    fit_file_name text,
                    fit_session integer,
                    -- `cyclelog ftp test`'s mark: 20min or ramp.
                    fitness_test text,
                    -- `cyclelog show ID --json` as the collector showed it.
                    summary jsonb,
                    start_time timestamptz,
                    end_time timestamptz,
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    CHECK (deleted = (content_digest IS NULL)),
                    CHECK (deleted OR (summary IS NOT NULL AND (journal IS NULL) <> (fit_file IS NULL)))
                )
                """,
                """
                CREATE INDEX ride_by_rider ON ride (rider_id, start_time)
                """,
                """
                -- A version pushed with content other than the server's of the same version: kept until settled.
                CREATE TABLE ride_conflict (
                    id bigserial PRIMARY KEY,
                    sync_identifier uuid NOT NULL REFERENCES ride (sync_identifier),
                    version integer NOT NULL,
                    content_digest text,
                    collector_id uuid NOT NULL REFERENCES collector (id),
                    recorded_at timestamptz NOT NULL DEFAULT now(),
                    resolved_at timestamptz,
                    -- 'server' or 'local': which copy was kept.
                    kept text CHECK (kept IN ('server', 'local')),
                    UNIQUE (sync_identifier, version, content_digest, collector_id)
                )
                """,
                """
                -- The rides as a dashboard wants them (the deleted ones left out), values from `show --json`.
                CREATE VIEW ride_summary AS
                SELECT r.sync_identifier, p.name AS rider, c.name AS collector, r.version, r.start_time, r.end_time,
                    r.summary ->> 'name' AS name,
                    (r.summary ->> 'elapsedSeconds')::float8 AS elapsed_seconds,
                    (r.summary ->> 'movingSeconds')::float8 AS moving_seconds,
                    (r.summary ->> 'distanceMeters')::float8 AS distance_meters,
                    (r.summary ->> 'averagePowerWatts')::float8 AS average_power_watts,
                    (r.summary ->> 'normalizedPowerWatts')::float8 AS normalized_power_watts,
                    (r.summary ->> 'workJoules')::float8 AS work_joules,
                    (r.summary ->> 'averageHeartRateBPM')::float8 AS average_heart_rate_bpm,
                    (r.summary ->> 'trainingStressScore')::float8 AS training_stress_score,
                    r.fitness_test, r.updated_at
                FROM ride r JOIN rider p ON p.id = r.rider_id JOIN collector c ON c.id = r.collector_id
                WHERE NOT r.deleted
                """,
                pushRuleV1,
                """
                -- A read-only role for dashboards: GRANT cyclelog_reader TO someone. Made only where this user may
                -- make roles; otherwise `init` says how.
                DO $$
                BEGIN
                    BEGIN
                        CREATE ROLE cyclelog_reader NOLOGIN;
                    -- Roles belong to the whole cluster: another database's init may have made it just now.
                    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
                    END;
                    GRANT SELECT ON ride_summary, rider, collector TO cyclelog_reader;
                EXCEPTION WHEN insufficient_privilege THEN
                    RAISE NOTICE 'no role cyclelog_reader: this user may not create roles';
                END;
                $$
                """,
            ]),
        Migration(
            name: "v2 a deleted ride stored again by the rider's explicit --undelete",
            statements: [pushRuleV2]),
        Migration(
            name: "v3 each ride row marked with the transaction that wrote it, for pulling what changed",
            statements: [
                """
                -- The transaction that wrote the row's current version (PostgreSQL's 64-bit transaction ID, which
                -- never wraps): a pull reads the rows written since its previous pull's horizon, not every row.
                -- Rows present now take the migration's own.
                ALTER TABLE ride ADD COLUMN changed_by xid8 NOT NULL DEFAULT pg_current_xact_id()
                """,
                """
                -- Set on every write whatever the writer sends, so that no row is written behind a pull's back.
                CREATE FUNCTION cyclelog_ride_changed() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    NEW.changed_by := pg_current_xact_id();
                    RETURN NEW;
                END;
                $$
                """,
                """
                CREATE TRIGGER ride_changed BEFORE INSERT OR UPDATE ON ride
                FOR EACH ROW EXECUTE FUNCTION cyclelog_ride_changed()
                """,
                """
                CREATE INDEX ride_by_change ON ride (rider_id, changed_by)
                """,
                """
                -- This store's identity, made once: a collector's pull horizon is kept per store, as transaction
                -- IDs mean nothing in another one.
                CREATE TABLE cyclelog_store (
                    id uuid PRIMARY KEY,
                    one boolean NOT NULL UNIQUE DEFAULT true CHECK (one)
                )
                """,
                """
                INSERT INTO cyclelog_store (id) VALUES (gen_random_uuid())
                """,
            ]),
    ]

    /// v1's rule: a tombstone on the server made every later version stale, so a ride stored again on purpose
    /// (`--undelete`) could never be pushed.
    static let pushRuleV1 = """
        -- The rule for one incoming version of a ride (Docs/guide/sync.md, "Rides on every machine"), in the caller's
        -- transaction; concurrent pushes of the same ride wait for each other on its row. Returns
        -- inserted, replaced, unchanged, conflict, stale, or refused: and why.
        CREATE FUNCTION cyclelog_push(
            p_sync uuid, p_rider uuid, p_collector uuid, p_version integer, p_digest text,
            p_journal text, p_fit bytea, p_fit_name text, p_fit_session integer, p_fitness_test text,
            p_summary jsonb, p_start timestamptz, p_end timestamptz
        ) RETURNS text LANGUAGE plpgsql AS $$
        DECLARE
            current ride%ROWTYPE;
            computed text;
            is_tombstone boolean := p_digest IS NULL;
        BEGIN
            IF NOT is_tombstone THEN
                IF (p_journal IS NULL) = (p_fit IS NULL) THEN
                    RETURN 'refused: a ride carries either its journal or its file';
                END IF;
                computed := encode(sha256(coalesce(convert_to(p_journal, 'UTF8'), p_fit)), 'hex');
                IF computed <> p_digest THEN
                    RETURN 'refused: its content digest is ' || p_digest || ' but its content hashes to '
                        || computed;
                END IF;
            END IF;
            LOOP
                SELECT * INTO current FROM ride WHERE sync_identifier = p_sync FOR UPDATE;
                EXIT WHEN FOUND;
                INSERT INTO ride (sync_identifier, rider_id, version, content_digest, deleted, collector_id,
                    journal, fit_file, fit_file_name, fit_session, fitness_test, summary, start_time, end_time)
                VALUES (p_sync, p_rider, p_version, p_digest, is_tombstone, p_collector, p_journal, p_fit,
                    p_fit_name, p_fit_session, p_fitness_test, p_summary, p_start, p_end)
                ON CONFLICT (sync_identifier) DO NOTHING;
                -- Another collector may have inserted the same ride a moment ago: then its row is read.
                IF FOUND THEN RETURN 'inserted'; END IF;
            END LOOP;
            IF current.deleted OR current.version > p_version THEN
                RETURN 'stale';
            ELSIF current.version < p_version THEN
                UPDATE ride SET rider_id = p_rider, version = p_version, content_digest = p_digest,
                    deleted = is_tombstone, collector_id = p_collector, journal = p_journal, fit_file = p_fit,
                    fit_file_name = p_fit_name, fit_session = p_fit_session, fitness_test = p_fitness_test,
                    summary = p_summary, start_time = coalesce(p_start, current.start_time),
                    end_time = coalesce(p_end, current.end_time), updated_at = now()
                WHERE sync_identifier = p_sync;
                RETURN 'replaced';
            ELSIF current.content_digest IS NOT DISTINCT FROM p_digest THEN
                RETURN 'unchanged';
            END IF;
            INSERT INTO ride_conflict (sync_identifier, version, content_digest, collector_id)
            VALUES (p_sync, p_version, p_digest, p_collector)
            ON CONFLICT (sync_identifier, version, content_digest, collector_id) DO NOTHING;
            RETURN 'conflict';
        END;
        $$
        """

    /// v2's rule: as v1's, but a version above a deletion's replaces it (the ride comes back everywhere). Only an
    /// explicit `--undelete` makes such a version: a collector stores a deleted ride again on no other terms, and an
    /// old copy's versions are never above its deletion's. A cyclelog-sync from before v2 refuses the schema.
    static let pushRuleV2 = pushRuleV1.replacingOccurrences(of: "CREATE FUNCTION", with: "CREATE OR REPLACE FUNCTION")
        .replacingOccurrences(
            of: "IF current.deleted OR current.version > p_version THEN",
            with: "IF current.version > p_version OR (current.deleted AND current.version = p_version) THEN")
}

/// How long to wait before the next attempt after failures in a row: 1, 2, 4 … 300 s.
public enum Backoff {
    public static func seconds(afterFailures failures: Int) -> Int {
        min(300, 1 << min(max(failures - 1, 0), 9))
    }
}
