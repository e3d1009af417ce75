//! Executing the creation script of one repetition's database: deciding the IFI action, planning
//! tempdb, running every [`Step`] in order (the ownership mark verified inside the new database,
//! the files read back against the plan) and keeping what the cleanup of a failed creation needs.

use super::applock::Mode;
use super::identity::Product;
use super::instance::{self, InstanceChanges};
use super::provision::{self, PlannedFile, Provision};
use super::readback::{self, Verdict};
use super::script::{self, Step};
use super::{ifi, marker, teardown, MssqlBackend, MssqlConnection};
use crate::model::config::StorageSpec;
use crate::model::error::{Error, Result};
use crate::model::plan::{DatabasePlan, OWNED_PREFIX};
use std::collections::BTreeMap;

mod cleanup;

pub(super) use cleanup::clean_up;

/// Creates `plan`'s database on the server; returns its provisioning and `database_id`. What
/// happened so far stays in `build`, so a failed creation can be cleaned up.
pub(super) async fn build(
    backend: &MssqlBackend,
    admin: &mut MssqlConnection,
    plan: &DatabasePlan,
    build: &mut Build,
) -> Result<(Provision, i64)> {
    let storage = &plan.storage;
    // `ifi = true` is proven by the absence of data-file zeroing lines, which needs the same
    // zero-fill logging flags: only where instance changes are allowed and the login is
    // sysadmin; otherwise it is said to be unproven.
    let sysadmin = backend.permissions.sysadmin == Some(true)
        || backend
            .facts
            .preconditions
            .get("login_is_sysadmin")
            .map(String::as_str)
            == Some("yes");
    let proves_instant = storage.ifi == Some(true) && backend.allow_instance_changes && sysadmin;
    // The lock before the first read of instance state (findings N1, N3 of the fourth review):
    // what is read below is what the plan and its undo are computed from, and what the window
    // relies on.
    if let Some(mode) = lock_mode(storage, proves_instant) {
        build.changes.hold(mode).await?;
    }
    let ifi_plan = ifi::plan(admin, storage.ifi, backend.facts.platform).await?;
    let mut inputs = script::Inputs {
        disable_ifi: ifi_plan.set.clone(),
        verify_zeroing: ifi_plan.verify,
        owner: marker::Marking {
            db: plan.name.clone(),
            marker: marker::marker_text(&backend.host, backend.started, &backend.owner),
            host: backend.host.clone(),
            pid: std::process::id(),
            started: backend.started,
        },
        ..script::Inputs::default()
    };
    if touches_tempdb(storage) {
        let tempdb = instance::read_and_plan_tempdb(admin, storage, backend.facts.platform).await?;
        build.counts.extend(tempdb.counts());
        inputs.tempdb = tempdb.changes;
    }
    if storage.ifi == Some(true) {
        if proves_instant {
            inputs.verify_instant = true;
        } else {
            build.unavailable.insert(
                "ifi_verification".into(),
                format!(
                    "ifi = true is taken from the reported IFI state, not proven: proving it logs \
                     every zero-fill of the instance during CREATE DATABASE (DBCC TRACEON(3004, \
                     3605, -1)), which needs sysadmin and {}=1",
                    instance::ALLOW_ENV
                ),
            );
        }
    }
    if ifi_plan.verify || inputs.verify_instant {
        // Before the first instance change: zeroing lines older than this are another run's.
        let rows = admin.query(ifi::NOW_SQL, &[]).await?;
        inputs.zeroing_since = rows
            .first()
            .and_then(|r| r.get_named::<Option<String>>("now").ok().flatten())
            .unwrap_or_default();
        for flag in ifi::TF_LOG_ZEROING {
            let rows = admin.query(&ifi::trace_status_sql(flag), &[]).await?;
            if !ifi::is_on_globally(&rows)? {
                inputs.probe_flags.push(flag);
            }
        }
    }
    let mut provision = provision::plan(
        storage,
        &provision::Target {
            name: &plan.name,
            volumes: &plan.volumes,
            defaults: backend.facts.dirs.as_ref().map_err(String::as_str),
            platform: backend.facts.platform,
            floors: &backend.facts.floors,
        },
    )?;
    let mut outcome = Ok(());
    let mut here = Inside {
        db: &plan.name,
        conn: None,
    };
    for step in script::steps(&plan.name, &provision, &inputs) {
        let mut ctx = StepContext {
            admin: &mut *admin,
            here: &mut here,
            provision: &mut provision,
            build: &mut *build,
            product: &backend.facts.product,
        };
        outcome = run_step(&mut ctx, &step).await;
        if outcome.is_err() {
            break;
        }
    }
    // No connection stays in the new database: a drop after a failure must not wait for it.
    drop(here);
    // After a failure the connection may be dead (a command timeout): the caller ends what may
    // still run and undoes the zero-fill logging flags on a fresh connection.
    outcome?;
    // The zero-fill logging flags never outlive CREATE DATABASE.
    build.probe.restore(admin).await?;
    if let Some(why) = log_growths_keep_ifi(storage, backend.facts.major) {
        crate::util::console::say(&format!("dbbench › mssql: {}: {why}", plan.name));
        build.unavailable.insert("ifi_off_log_growths".into(), why);
    }
    let rows = admin.query(&provision::exists_sql(&plan.name), &[]).await?;
    let database_id: i64 = rows
        .first()
        .ok_or_else(|| Error::msg("DB_ID returned no row"))?
        .get(0)?;
    Ok((provision, database_id))
}

/// Why `ifi = false` does not reach this cell's log growths: from SQL Server 2022 (major 16) a
/// log autogrowth of up to 64 MB gets instant file initialization whatever the service's
/// privilege ("Database instant file initialization": "Transaction log autogrowth events up to
/// 64 MB can benefit from instant file initialization"), so its growths are not zero-filled
/// although the data files are (finding C4). `None` where the cell's log growths are zeroed.
pub(super) fn log_growths_keep_ifi(storage: &StorageSpec, major: u32) -> Option<String> {
    use crate::model::config::Growth;
    if storage.ifi != Some(false) || major < 16 {
        return None;
    }
    const LIMIT: u64 = 64 << 20;
    let growth = match storage.log_growth {
        Some(Growth::Fixed(size)) if size.bytes > LIMIT => return None,
        Some(Growth::None) => return None,
        Some(Growth::Fixed(size)) => format!("{} KB", size.bytes >> 10),
        Some(Growth::Percent(p)) => format!("{p}% (up to 64 MB while the log is small)"),
        None => "the server's default".to_string(),
    };
    Some(format!(
        "ifi = false, but on SQL Server 2022 and later log autogrowths of up to 64 MB get instant \
         file initialization whatever the privilege, so this cell's log growths (log_growth = \
         {growth}) are not zero-filled; only the data files are"
    ))
}

/// The connection to the new database, opened when a step first needs it: the marker and the
/// files are written and read from inside the database, never with three-part names (see
/// [`marker`]).
struct Inside<'a> {
    db: &'a str,
    conn: Option<MssqlConnection>,
}

impl Inside<'_> {
    async fn conn(&mut self, admin: &MssqlConnection) -> Result<&mut MssqlConnection> {
        if self.conn.is_none() {
            self.conn = Some(admin.settings().connect(Some(self.db)).await?);
        }
        Ok(self.conn.as_mut().expect("connected above"))
    }
}

/// What a step works with.
struct StepContext<'a, 'b> {
    admin: &'a mut MssqlConnection,
    here: &'a mut Inside<'b>,
    provision: &'a mut Provision,
    build: &'a mut Build,
    product: &'a Product,
}

/// Executes one step of the creation script.
async fn run_step(ctx: &mut StepContext<'_, '_>, step: &Step) -> Result<()> {
    let ifi_error = |reason: String| Error::Unsupported {
        option: "ifi",
        backend: "mssql",
        reason,
    };
    let (admin, build) = (&mut *ctx.admin, &mut *ctx.build);
    match step {
        Step::Instance(change) => build.changes.apply(admin, change).await,
        Step::Probe(change) => build.probe.apply(admin, change).await,
        Step::EndProbe => build.probe.restore(admin).await,
        Step::Run(sql) => admin.batch(sql).await,
        Step::Create(sql) => {
            // Sent: from here a failure without the server's answer (a command timeout) leaves
            // it unknown whether the database exists.
            build.create_sent = true;
            admin.batch(sql).await?;
            build.created = true;
            Ok(())
        }
        Step::Mark(owner) => mark_or_refuse(ctx, owner).await,
        Step::Locate => {
            let here = ctx.here.conn(admin).await?;
            let rows = here.query(readback::FILES_SQL, &[]).await;
            match rows
                .map_err(|e| e.to_string())
                .and_then(|r| readback::located(&r))
            {
                Ok(files) => {
                    ctx.provision.files = files;
                    build.counts.insert("files_verified".into(), 1);
                }
                Err(why) => {
                    build.unavailable.insert(
                        "files_verified".into(),
                        format!("the server placed the files (the cell declares none); {why}"),
                    );
                }
            }
            Ok(())
        }
        Step::ReadBack => {
            let here = ctx.here.conn(admin).await?;
            let rows = here.query(readback::FILES_SQL, &[]).await;
            match rows.and_then(|r| readback::compare(&r, &ctx.provision.files)) {
                Ok(Verdict::Matches) => {
                    build.counts.insert("files_verified".into(), 1);
                    Ok(())
                }
                Ok(Verdict::Unavailable(why)) => {
                    build.unavailable.insert("files_verified".into(), why);
                    Ok(())
                }
                Ok(Verdict::Differs(d)) => Err(Error::Unsupported {
                    option: "data_files",
                    backend: "mssql",
                    reason: format!(
                        "the server created the files differently from the plan ({}); the cell \
                         would not measure the declared configuration",
                        d.join("; ")
                    ),
                }),
                Err(e) => {
                    build
                        .unavailable
                        .insert("files_verified".into(), e.to_string());
                    Ok(())
                }
            }
        }
        Step::ConfirmTraceFlag(flag) => {
            let rows = admin.query(&ifi::trace_status_sql(*flag), &[]).await?;
            if !ifi::is_on_globally(&rows)? {
                return Err(ifi_error(format!(
                    "DBCC TRACEON({flag}, -1) was accepted, but DBCC TRACESTATUS does not show \
                     the flag on globally"
                )));
            }
            build.counts.insert(format!("trace_flag_{flag}_applied"), 1);
            build.ifi_flag = Some(*flag);
            Ok(())
        }
        Step::VerifyInstant { sql } => {
            let log = admin.query(sql, &[]).await;
            match ifi::judge_instant(log, &data_paths(&ctx.provision.files)) {
                ifi::Zeroing::Verified => {
                    build.counts.insert("ifi_on_verified".into(), 1);
                    Ok(())
                }
                ifi::Zeroing::NotZeroed(why) => Err(ifi_error(why)),
                ifi::Zeroing::Unverified(why) => {
                    build.unavailable.insert("ifi_verification".into(), why);
                    Ok(())
                }
            }
        }
        Step::VerifyZeroing { sql, flags } => {
            let log = admin.query(sql, &[]).await;
            match ifi::judge_zeroing(log, &data_paths(&ctx.provision.files), flags) {
                ifi::Zeroing::Verified => {
                    build.counts.insert("ifi_zeroing_verified".into(), 1);
                    // Exactly which flags were set when IFI was proven off on this build.
                    for flag in flags {
                        build.counts.insert(format!("ifi_off_trace_flag_{flag}"), 1);
                    }
                    Ok(())
                }
                ifi::Zeroing::NotZeroed(why) => Err(ifi_error(why)),
                ifi::Zeroing::Unverified(why) => {
                    build.unavailable.insert("ifi_verification".into(), why);
                    Ok(())
                }
            }
        }
    }
}

/// Marks the new database through a connection to it; when no mark can be verified inside it,
/// drops the database this process has just created (its name is dbbench's) and refuses the cell.
async fn mark_or_refuse(ctx: &mut StepContext<'_, '_>, owner: &marker::Marking) -> Result<()> {
    let marked = match ctx.here.conn(ctx.admin).await {
        Ok(here) => marker::mark(here, ctx.admin, owner).await,
        Err(e) => Err(Error::Unsupported {
            option: "database",
            backend: "mssql",
            reason: format!(
                "dbbench could not connect to the new database {} to mark it as its own ({e}); \
                 it runs nothing it cannot later prove is its own",
                owner.db
            ),
        }),
    };
    let refusal = match marked {
        Ok(held) => {
            if let marker::Held::Table(_) = held {
                ctx.build.counts.insert("ownership_marker_table".into(), 1);
            }
            return Ok(());
        }
        Err(e) => e,
    };
    // The connection inside must be gone before the drop.
    ctx.here.conn = None;
    if ctx.build.created && owner.db.starts_with(OWNED_PREFIX) {
        ctx.build.created = false;
        let how = teardown::Dropping::own(ctx.product, false);
        // Exactly one of the two is said: dropped, or dropping failed.
        return Err(
            match teardown::drop_owned(ctx.admin, &owner.db, false, how).await {
                Ok(()) => match refusal {
                    Error::Unsupported {
                        option,
                        backend,
                        reason,
                    } => Error::Unsupported {
                        option,
                        backend,
                        reason: format!("{reason} (it dropped the database it had just created)"),
                    },
                    other => other,
                },
                Err(d) => Error::msg(format!(
                    "{refusal}\n(dropping the database {} it had just created failed: {d}; drop \
                     it by hand)",
                    owner.db
                )),
            },
        );
    }
    Err(refusal)
}

/// How a repetition of `storage` holds the server lock: exclusively when it may change the
/// instance (`ifi = false`, tempdb options, or the zero-fill logging that proves `ifi = true`),
/// shared when it only relies on instance state (`ifi = true` unproven), not at all otherwise.
pub(super) fn lock_mode(storage: &StorageSpec, proves_instant: bool) -> Option<Mode> {
    if storage.ifi == Some(false) || touches_tempdb(storage) || proves_instant {
        Some(Mode::Exclusive)
    } else if storage.ifi == Some(true) {
        Some(Mode::Shared)
    } else {
        None
    }
}

/// Whether the spec changes tempdb (an instance-level change).
pub(super) fn touches_tempdb(storage: &StorageSpec) -> bool {
    storage.tempdb_files.is_some()
        || storage.tempdb_size.is_some()
        || storage.tempdb_growth.is_some()
}

/// State collected while a database is built, kept for cleanup on failure.
pub(super) struct Build {
    pub(super) changes: InstanceChanges,
    /// The zero-fill logging flags set to verify `ifi = false`, undone after `CREATE DATABASE`.
    pub(super) probe: InstanceChanges,
    /// `CREATE DATABASE` was sent.
    pub(super) create_sent: bool,
    /// `CREATE DATABASE` succeeded.
    pub(super) created: bool,
    pub(super) counts: BTreeMap<String, i64>,
    pub(super) unavailable: BTreeMap<String, String>,
    /// The IFI-off trace flag confirmed on, if any.
    pub(super) ifi_flag: Option<u32>,
}

/// The data files' paths on the server.
fn data_paths(files: &[PlannedFile]) -> Vec<String> {
    files
        .iter()
        .filter(|f| f.kind == crate::model::evidence::FileKind::Data)
        .map(|f| f.physical.clone())
        .collect()
}

/// Volume names by logical file name.
pub(super) fn volumes_by_file(files: &[PlannedFile]) -> BTreeMap<String, String> {
    files
        .iter()
        .filter_map(|f| f.volume.clone().map(|v| (f.logical.clone(), v)))
        .collect()
}
