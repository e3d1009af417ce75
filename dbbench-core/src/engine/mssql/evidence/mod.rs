//! The server's own evidence for the measured window: what is snapshotted when the window opens,
//! and how the differences become [`Evidence`] fields when it closes.
//!
//! Each metric stands alone: one the server cannot provide (an older version without a view, a
//! missing permission, a SQL-Server-compatible server) is recorded in `Evidence::unavailable`
//! with the server's error, and the run goes on.

pub mod counters;
pub mod file_stats;
pub mod growth_events;
pub mod load_waits;
pub mod others;
pub mod session_waits;
pub mod vlf;
pub mod waits;

mod closing;

use super::connect::ConnectSettings;
use super::MssqlConnection;
use crate::model::evidence::Evidence;
use closing::{counter_evidence, file_evidence, log_evidence, unavailable, LogGrowths};
use file_stats::{DbFile, FileIo};
use growth_events::DurationUnit;
use std::collections::BTreeMap;
use std::time::Duration;

/// A metric's value, or why the server could not provide it.
type Outcome<T> = std::result::Result<T, String>;

/// What the window needs to know about the database.
pub struct WindowContext<'a> {
    /// The database name.
    pub db: &'a str,
    /// Its `database_id`, for the Extended Events filter.
    pub database_id: i64,
    /// Volume names by logical file name.
    pub volumes: &'a BTreeMap<String, String>,
    /// For the counter sampler's own connection.
    pub settings: &'a ConnectSettings,
    /// The product: a growth session is only created where it has server-scoped sessions.
    pub product: &'a super::identity::Product,
}

/// The snapshots taken when the window opened.
pub struct Window {
    files: Outcome<Vec<DbFile>>,
    io: Outcome<BTreeMap<i64, FileIo>>,
    vlf: Outcome<vlf::VlfCount>,
    waits: Outcome<waits::WaitSnapshot>,
    /// The window connection's own waits ([`session_waits`]).
    session_waits: Outcome<waits::WaitSnapshot>,
    /// The session's target and duration unit once it runs (the unit is an `Err` when the
    /// server does not name it).
    xe: Outcome<(growth_events::Target, Outcome<DurationUnit>)>,
    sampler: Outcome<counters::Sampler>,
    /// Notes for `unavailable` made while opening (a fallback taken).
    notes: BTreeMap<String, String>,
    /// The server's UTC clock when the window opened: growth events stamped earlier are another
    /// session's (finding C2).
    started_utc: Option<String>,
}

async fn rows(conn: &mut MssqlConnection, sql: &str) -> Outcome<Vec<crate::model::value::Row>> {
    conn.query(sql, &[]).await.map_err(|e| e.to_string())
}

async fn files(conn: &mut MssqlConnection) -> Outcome<Vec<DbFile>> {
    file_stats::files_from_rows(&rows(conn, file_stats::FILES_SQL).await?)
        .map_err(|e| e.to_string())
}

async fn io(conn: &mut MssqlConnection) -> Outcome<BTreeMap<i64, FileIo>> {
    file_stats::io_from_rows(&rows(conn, file_stats::IO_SQL).await?).map_err(|e| e.to_string())
}

async fn wait_snapshot(conn: &mut MssqlConnection) -> Outcome<waits::WaitSnapshot> {
    waits::snapshot_from_rows(&rows(conn, waits::SNAPSHOT_SQL).await?).map_err(|e| e.to_string())
}

async fn start_growth_session(
    conn: &mut MssqlConnection,
    ctx: &WindowContext<'_>,
    notes: &mut BTreeMap<String, String>,
) -> Outcome<(growth_events::Target, Outcome<DurationUnit>)> {
    use growth_events::Target;
    let session = growth_events::session_name(ctx.db);
    // A session left by a crashed run of the same database name would make CREATE fail.
    let leftovers = growth_events::stop_and_clean(conn, &session).await;
    if !leftovers.is_empty() {
        return Err(leftovers.join("; "));
    }
    let target = match conn
        .batch(&growth_events::create_sql(
            &session,
            ctx.database_id,
            Target::EventFile,
        ))
        .await
    {
        Ok(()) => Target::EventFile,
        Err(file_error) => {
            // A CREATE that failed part-way may have left the session defined.
            let _ = conn.batch(&growth_events::drop_sql(&session)).await;
            conn.batch(&growth_events::create_sql(
                &session,
                ctx.database_id,
                Target::RingBuffer,
            ))
            .await
            .map_err(|e| format!("event_file: {file_error}; ring_buffer: {e}"))?;
            notes.insert(
                "growth_events_file".into(),
                format!(
                    "the event_file target could not be created ({file_error}); events came from \
                     a ring buffer, whose losses are counted in growth_events_complete"
                ),
            );
            Target::RingBuffer
        }
    };
    let unit = match rows(conn, growth_events::DURATION_UNIT_SQL).await {
        Ok(r) => match r.first().map(|row| row.get::<String>(0)) {
            Some(Ok(text)) => DurationUnit::from_description(&text).ok_or(format!(
                "the description of database_file_size_change.duration names no unit: {text:?}"
            )),
            Some(Err(e)) => Err(e.to_string()),
            None => Err("sys.dm_xe_object_columns does not describe the duration field".into()),
        },
        Err(e) => Err(e),
    };
    Ok((target, unit))
}

impl Window {
    /// Starts the growth session and the counter sampler, then snapshots files, I/O, VLFs and
    /// waits (waits last, closest to the body's start).
    pub async fn open(conn: &mut MssqlConnection, ctx: &WindowContext<'_>) -> Window {
        let mut notes = BTreeMap::new();
        let started_utc = rows(conn, growth_events::NOW_UTC_SQL)
            .await
            .ok()
            .and_then(|r| r.first()?.get_named::<Option<String>>("now_utc").ok()?);
        let xe = if ctx.product.has_server_event_sessions() {
            start_growth_session(conn, ctx, &mut notes).await
        } else {
            // Nothing is sent that the product lacks, so teardown has nothing to clean either.
            Err(format!(
                "{} has no server-scoped Extended Events sessions",
                ctx.product.name()
            ))
        };
        let sampler = match ctx.settings.connect(Some(ctx.db)).await {
            Ok(sampler_conn) => Ok(counters::Sampler::start(sampler_conn, ctx.db)),
            Err(e) => Err(format!("cannot open the sampling connection: {e}")),
        };
        Window {
            files: files(conn).await,
            io: io(conn).await,
            vlf: vlf::read(conn).await.map_err(|e| e.to_string()),
            waits: wait_snapshot(conn).await,
            session_waits: session_waits::snapshot(conn).await,
            xe,
            sampler,
            notes,
            started_utc,
        }
    }

    /// Whether this window started a growth session, which [`close`](Self::close) stops and
    /// removes (a window dropped without closing leaves it to the teardown).
    pub fn has_growth_session(&self) -> bool {
        self.xe.is_ok()
    }

    /// Takes the closing snapshots and writes the window's evidence into `run`.
    pub async fn close(
        self,
        conn: &mut MssqlConnection,
        ctx: &WindowContext<'_>,
        evidence: &mut Evidence,
    ) {
        // First: the closing queries themselves wait too.
        let session_after = session_waits::snapshot(conn).await;
        match (&self.session_waits, &session_after) {
            (Ok(before), Ok(after)) => evidence.counts.extend(session_waits::counts(before, after)),
            // Only where the product has the view: elsewhere (Babelfish) the instance waits are
            // unavailable already, and so is everything this would add.
            (Err(e), _) | (_, Err(e)) if *ctx.product == super::identity::Product::SqlServer => {
                unavailable(evidence, "session_waits", e.clone())
            }
            _ => {}
        }
        let samples = match self.sampler {
            Ok(sampler) => sampler.finish().await,
            Err(e) => Err(e),
        };
        let waits_after = wait_snapshot(conn).await;
        let io_after = io(conn).await;
        let files_after = files(conn).await;
        let vlf_after = vlf::read(conn).await.map_err(|e| e.to_string());
        let growth = match self.xe {
            Ok((target, unit)) => {
                let since = self.started_utc.as_deref();
                read_growth(conn, ctx, target, unit, since, evidence).await
            }
            Err(e) => Err(e),
        };
        evidence.unavailable.extend(self.notes);
        match (&self.waits, &waits_after) {
            (Ok(before), Ok(after)) => {
                evidence.waits = waits::top_waits(&waits::window_delta(before, after));
            }
            (Err(e), _) | (_, Err(e)) => unavailable(evidence, "waits", e.clone()),
        }
        let log_growths = counter_evidence(&samples, evidence);
        let io_pair = match (&self.io, &io_after) {
            (Ok(b), Ok(a)) => Some((b, a)),
            (Err(e), _) | (_, Err(e)) => {
                unavailable(evidence, "file_io", e.clone());
                None
            }
        };
        let growth_by_file = match &growth {
            Ok(g) => Some(g),
            Err(e) => {
                unavailable(evidence, "growth_events", e.clone());
                None
            }
        };
        let files = (&self.files, &files_after);
        file_evidence(files, io_pair, growth_by_file, ctx.volumes, evidence);
        let log_growths = LogGrowths {
            counter: log_growths,
            events: growth.is_ok(),
        };
        log_evidence((&self.vlf, &vlf_after), files, log_growths, evidence);
    }
}

/// Waits for the session's dispatch latency, reads the events (event file, or ring buffer with
/// its losses counted), stops and cleans up the session, and sums the growths per file.
async fn read_growth(
    conn: &mut MssqlConnection,
    ctx: &WindowContext<'_>,
    target: growth_events::Target,
    unit: Outcome<DurationUnit>,
    since: Option<&str>,
    evidence: &mut Evidence,
) -> Outcome<BTreeMap<i64, growth_events::FileGrowth>> {
    let session = growth_events::session_name(ctx.db);
    // Events reach the target within MAX_DISPATCH_LATENCY (1 s); wait it out, outside the
    // measured time, so the last growths of the window are not lost.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let events = match target {
        growth_events::Target::EventFile => {
            read_event_file(conn, ctx, &session, since, evidence).await
        }
        growth_events::Target::RingBuffer => read_ring_buffer(conn, &session, evidence).await,
    };
    let cleanup = growth_events::stop_and_clean(conn, &session).await;
    if !cleanup.is_empty() {
        evidence
            .unavailable
            .insert("growth_session_cleanup".into(), cleanup.join("; "));
    }
    let events = events?;
    if let Err(why) = &unit {
        evidence
            .unavailable
            .insert("growth_durations".into(), why.clone());
    }
    Ok(growth_events::per_file(&events, unit.ok()))
}

async fn read_event_file(
    conn: &mut MssqlConnection,
    ctx: &WindowContext<'_>,
    session: &str,
    since: Option<&str>,
    evidence: &mut Evidence,
) -> Outcome<Vec<growth_events::GrowthEvent>> {
    let (file, dropped) = growth_events::running_file(conn, session)
        .await
        .map_err(|e| e.to_string())?
        .ok_or(format!(
            "the Extended Events session {session} was not running"
        ))?;
    let pattern = growth_events::file_pattern(&file, session);
    let records = rows(conn, &growth_events::read_file_sql(&pattern))
        .await?
        .iter()
        .map(|r| {
            Ok((
                r.get_named::<String>("file_name")?,
                r.get_named::<String>("event_data")?,
            ))
        })
        .collect::<crate::model::error::Result<Vec<_>>>()
        .map_err(|e| e.to_string())?;
    if dropped > 0 {
        evidence.unavailable.insert(
            "growth_events_complete".into(),
            format!("the event file target dropped {dropped} buffers; per-file growth counts are a lower bound"),
        );
    }
    growth_events::parse_event_file(&records, session, ctx.database_id, since)
        .map_err(|e| e.to_string())
}

async fn read_ring_buffer(
    conn: &mut MssqlConnection,
    session: &str,
    evidence: &mut Evidence,
) -> Outcome<Vec<growth_events::GrowthEvent>> {
    let read = rows(conn, &growth_events::read_sql(session)).await?;
    let xml = match read.first().map(|r| r.get::<String>(0)) {
        Some(Ok(xml)) => xml,
        Some(Err(e)) => return Err(e.to_string()),
        None => {
            return Err(format!(
                "the Extended Events session {session} was not running"
            ))
        }
    };
    let buffer = growth_events::parse_ring_buffer(&xml).map_err(|e| e.to_string())?;
    if buffer.lost > 0 {
        evidence.unavailable.insert(
            "growth_events_complete".into(),
            format!(
                "the ring buffer returned {} of the {} events it processed; per-file growth \
                 counts are a lower bound",
                buffer.events.len(),
                buffer.processed
            ),
        );
    }
    Ok(buffer.events)
}
