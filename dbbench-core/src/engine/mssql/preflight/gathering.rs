//! Gathering the preflight's answers from a server: one connection, every question asked
//! (creating nothing), then [`evaluate`]. Apart from the decisions because it is the only part
//! that needs a server; the decisions are tested on recorded answers.

use super::super::instance;
use super::super::{ConnectSettings, ServerFacts};
use super::{evaluate, Answers, Permissions, Preflight, Probe, PERMISSIONS_SQL, PROBES};
use crate::model::error::Result;

/// Connects with `settings`, gathers the answers (creating nothing) and evaluates `cells`.
pub async fn run(
    settings: &ConnectSettings,
    cells: &[crate::engine::plugin::PreflightCell<'_>],
    allow_instance_changes: bool,
) -> Result<Preflight> {
    let mut conn = settings.connect(Some("master")).await?;
    let facts = ServerFacts::read(&mut conn, &crate::model::volume::Volumes::from_env()?).await?;
    let permissions = match conn.query(PERMISSIONS_SQL, &[]).await {
        Ok(rows) => Permissions::from_rows(&rows),
        Err(_) => Permissions::default(),
    };
    let mut probes = Vec::new();
    for (metric, source, sql) in PROBES {
        // A view that exists but lists nothing (Babelfish's sys.database_files) gives no
        // evidence either.
        let outcome = match conn.query(sql, &[]).await {
            Ok(rows) if rows.is_empty() => Err("the server answered with no rows".to_string()),
            Ok(_) => Ok(()),
            Err(e) => Err(e.to_string()),
        };
        probes.push(Probe {
            metric,
            source,
            outcome,
        });
    }
    probes.push(Probe {
        metric: "VLF counts",
        source: "sys.dm_db_log_info, DBCC LOGINFO before 2016 SP2",
        outcome: super::super::evidence::vlf::read(&mut conn)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
    });
    let tempdb_files = match conn.query(instance::TEMPDB_FILES_SQL, &[]).await {
        Ok(rows) => instance::tempdb_files(&rows).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let answers = Answers {
        server: settings.server().to_string(),
        product: facts.product.clone(),
        version: facts.version.clone(),
        major: facts.major,
        platform: facts.platform,
        ifi: facts.ifi.clone(),
        ifi_from: facts
            .preconditions
            .get("ifi_from")
            .cloned()
            .unwrap_or_default(),
        tempdb_files,
        permissions,
        dirs: facts.dirs.clone(),
        floors: facts.floors.clone(),
        allow_instance_changes,
        trace_status: facts.tf_no_ifi.as_ref().map(|_| ()).map_err(Clone::clone),
        ifi_off_flag_on: facts.tf_no_ifi == Ok(true),
        cold_cache: super::super::hooks::Hooks::from_env()
            .map(|h| h.cold_cache)
            .unwrap_or(false),
        restart_hook: super::super::hooks::Hooks::from_env()
            .map(|h| h.restart.is_some())
            .unwrap_or(false),
        probes,
    };
    Ok(evaluate(&answers, cells))
}
