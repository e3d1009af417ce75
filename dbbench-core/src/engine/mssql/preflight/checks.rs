//! The preflight's server-wide checks, one [`Check`] line each: product, IFI, trace flags,
//! Extended Events, each evidence source, permissions, paths, tempdb, `KILL`, size floors and the
//! shared-server warning that lists every instance-wide change the cells would make.

use super::*;

/// What the server is, and the instance-wide sources of evidence: IFI, trace flags, Extended
/// Events (`trace_flags`: whether this login may set them here).
pub(super) fn server_checks(answers: &Answers, trace_flags: Option<bool>) -> Vec<Check> {
    let p = &answers.permissions;
    let product = &answers.product;
    let trace_detail = match (&answers.trace_status, product.has_trace_flags()) {
        (_, false) => format!("{} has no global trace flags", product.name()),
        (Err(e), true) => format!("DBCC TRACESTATUS failed here: {e}"),
        (Ok(()), true) => format!(
            "DBCC TRACESTATUS answered; sysadmin {}; ALTER SETTINGS {} (not enough for DBCC \
             TRACEON)",
            yes(p.sysadmin),
            yes(p.alter_settings)
        ),
    };
    let xe = if product.has_server_event_sessions() {
        p.alter_any_event_session.or(p.sysadmin)
    } else {
        Some(false)
    };
    let ifi_readable = !matches!(answers.ifi, IfiState::Unknown(_));
    vec![
        Check {
            what: "server".into(),
            ok: Some(*product == Product::SqlServer),
            detail: format!(
                "{} on {}{}",
                answers.version,
                format!("{:?}", answers.platform).to_lowercase(),
                if *product == Product::SqlServer {
                    String::new()
                } else {
                    "; not Microsoft SQL Server: options it cannot honour are refused per cell"
                        .into()
                }
            ),
        },
        Check {
            what: "IFI state readable (sys.dm_server_services, else the error log's startup line)"
                .into(),
            ok: Some(ifi_readable),
            detail: if ifi_readable {
                format!("{} (from {})", answers.ifi.describe(), answers.ifi_from)
            } else {
                answers.ifi.describe()
            },
        },
        Check {
            what: "trace flags (DBCC TRACEON … -1, needs sysadmin)".into(),
            ok: trace_flags,
            detail: trace_detail,
        },
        Check {
            what: "server-scoped Extended Events (ALTER ANY EVENT SESSION)".into(),
            ok: xe,
            detail: if product.has_server_event_sessions() {
                yes(p.alter_any_event_session.or(p.sysadmin)).into()
            } else {
                format!(
                    "{} has no server-scoped event sessions; growth events will be unavailable",
                    product.name()
                )
            },
        },
    ]
}

/// Whether the evidence source `probe` answered.
pub(super) fn probe_check(probe: &Probe) -> Check {
    Check {
        what: format!("{} ({})", probe.metric, probe.source),
        ok: Some(probe.outcome.is_ok()),
        detail: match &probe.outcome {
            Ok(()) => "answered".into(),
            Err(e) => format!("will be recorded as unavailable: {e}"),
        },
    }
}

/// What the login may see and create, and where its files would go (`can_create`: whether it
/// may create databases).
pub(super) fn access_checks(answers: &Answers, can_create: Option<bool>) -> [Check; 4] {
    let p = &answers.permissions;
    [
        Check {
            what: "VIEW SERVER STATE (HAS_PERMS_BY_NAME)".into(),
            ok: p.view_server_state.or(p.sysadmin),
            detail: format!(
                "{}; the views it opens are tried above",
                yes(p.view_server_state.or(p.sysadmin))
            ),
        },
        Check {
            what: "VIEW DATABASE STATE".into(),
            ok: if p.view_database_state == Some(true) || can_create == Some(true) {
                Some(true)
            } else {
                p.view_database_state
            },
            detail: "VLF counts need it; the login owns the databases it creates, which \
                     includes it"
                .into(),
        },
        Check {
            what: "create databases (CREATE ANY DATABASE / ALTER ANY DATABASE)".into(),
            ok: can_create,
            detail: format!(
                "CREATE ANY DATABASE {}, ALTER ANY DATABASE {}",
                yes(p.create_any_database),
                yes(p.alter_any_database)
            ),
        },
        Check {
            what: "default paths".into(),
            ok: Some(answers.dirs.is_ok()),
            detail: match &answers.dirs {
                Ok(d) => format!("data {}, log {}", d.data, d.log),
                Err(why) => format!(
                    "{why}; cells that declare nothing about their files still run (the server \
                     places them)"
                ),
            },
        },
    ]
}

/// Whether tempdb may be changed (`tempdb`) and what it has now.
pub(super) fn tempdb_checks(answers: &Answers, tempdb: Option<bool>) -> [Check; 2] {
    let p = &answers.permissions;
    let product = &answers.product;
    [
        Check {
            what: "tempdb changes".into(),
            ok: tempdb,
            detail: match product.refusals(&TEMPDB).first() {
                Some((_, why)) => format!("{}: {why}", product.name()),
                None => format!(
                    "{}=1 {}; ALTER ANY DATABASE {}",
                    super::super::instance::ALLOW_ENV,
                    if answers.allow_instance_changes {
                        "set"
                    } else {
                        "not set"
                    },
                    yes(p.alter_any_database.or(p.sysadmin))
                ),
            },
        },
        Check {
            what: "tempdb data files (sys.master_files, tempdb.sys.database_files)".into(),
            ok: Some(matches!(&answers.tempdb_files, Ok(f) if !f.is_empty())),
            detail: tempdb_files_detail(&answers.tempdb_files),
        },
    ]
}

/// tempdb's data files in words: how many, their sizes now and at startup, and what
/// `tempdb_files` does with them.
pub(super) fn tempdb_files_detail(files: &std::result::Result<Vec<TempdbFile>, String>) -> String {
    match files {
        Ok(files) if !files.is_empty() => {
            let range = |pages: &dyn Fn(&TempdbFile) -> u64| {
                let mb = files.iter().map(|f| pages(f) / 128);
                let (lo, hi) = (mb.clone().min().unwrap_or(0), mb.max().unwrap_or(0));
                if lo == hi {
                    format!("{lo} MB")
                } else {
                    format!("{lo}–{hi} MB")
                }
            };
            format!(
                "{} data files, {} each now, {} at startup; tempdb_files = N runs with at \
                 least N: a tempdb with more files keeps them all (setup creates one per \
                 core, up to 8)",
                files.len(),
                range(&|f| f.current_pages),
                range(&|f| f.size_pages)
            )
        }
        Ok(_) => "the server answered with no rows".into(),
        Err(e) => format!("could not be listed: {e}"),
    }
}

/// What stops a runaway statement, and the sizes a cell is raised to.
pub(super) fn limit_checks(answers: &Answers) -> [Check; 2] {
    let p = &answers.permissions;
    [
        Check {
            what: "stop a runaway statement (KILL, needs ALTER ANY CONNECTION)".into(),
            ok: p.alter_any_connection.or(p.sysadmin),
            detail: format!(
                "{}; without it a body that overruns its time limit is refused at its next \
                 statement, but the running one goes on to its end",
                yes(p.alter_any_connection.or(p.sysadmin))
            ),
        },
        Check {
            what: "size floors".into(),
            ok: Some(answers.floors.model_read()),
            detail: answers.floors.describe(),
        },
    ]
}

/// A spec that only touches tempdb, to ask a product whether it has tempdb files to change.
/// The shared-server warning: every instance-wide change the cells would make, said once with
/// the cells that make it (finding B3).
pub(super) fn shared_server_check(
    answers: &Answers,
    cells: &[crate::engine::plugin::PreflightCell<'_>],
) -> Check {
    let mut lines: Vec<String> = Vec::new();
    // With the opt-in and sysadmin, `ifi = true` cells are proven with the zero-fill logging
    // flags; without, they change nothing and are recorded as unproven.
    let proves = answers.allow_instance_changes && answers.permissions.sysadmin == Some(true);
    for change in [
        super::super::permissions::IFI_OFF,
        super::super::permissions::IFI_PROOF,
        super::super::permissions::COLD,
        super::super::permissions::TEMPDB,
    ] {
        let makes = |spec: &StorageSpec, cache: crate::model::start::CacheState| {
            let cold = answers.cold_cache || cache == crate::model::start::CacheState::Cold;
            if change == super::super::permissions::IFI_PROOF {
                proves && spec.ifi == Some(true)
            } else {
                super::super::permissions::instance_changes(spec, cold).contains(&change)
            }
        };
        let makers: Vec<String> = cells
            .iter()
            .filter(|(_, _, spec, _)| answers.product.refusals(spec).is_empty())
            .filter(|(_, _, spec, cache)| makes(spec, *cache))
            .map(|(bench, cell, _, _)| format!("{bench} {cell}"))
            .collect();
        if !makers.is_empty() {
            lines.push(format!("{} ({})", change.long, makers.join(", ")));
        }
    }
    // The restart hook restarts the instance itself, for every cell (finding N14): its command
    // is the user's and is not shown (it may hold a password).
    if answers.restart_hook && !cells.is_empty() {
        lines.push(super::super::hooks::RESTART_WARNING.to_string());
    }
    Check {
        what: "instance-wide changes (shared server)".into(),
        ok: Some(lines.is_empty() || answers.allow_instance_changes),
        detail: if lines.is_empty() {
            "the cells change nothing outside their own databases".into()
        } else {
            format!(
                "{}; other people's sessions on this server are affected while they last; \
                 dbbench undoes each change after the repetition (after a crash, at its next \
                 start); {}=1 {}",
                lines.join("; "),
                super::super::instance::ALLOW_ENV,
                if answers.allow_instance_changes {
                    "is set"
                } else {
                    "is not set, so these cells are refused"
                }
            )
        },
    }
}
