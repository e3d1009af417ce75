//! How long the `credit` fixture takes to load on the embedded engine at a given scale
//! (default `full`: the article's 1.6 million rows), through the same path the runner uses:
//! one transaction, one prepared statement, dbbench's storage layer.
//!
//! `cargo run --release -p dbbench-core --example fixture_load [-- SCALE]`

use dbbench_core::__internals::config::{FixtureKind, StorageSpec};
use dbbench_core::__internals::DatabasePlan;
use dbbench_core::__internals::{embedded::EmbeddedBackend, EngineBackend, EngineDatabase};
use dbbench_core::{Result, Scale};
use std::time::Instant;

// The embedded engine's methods complete without yielding: one thread runs them.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let scale = Scale::parse(&std::env::args().nth(1).unwrap_or_else(|| "full".into()))?;
    let work_dir =
        std::env::temp_dir().join(format!("dbbench-fixture-load-{}", std::process::id()));
    let plan = DatabasePlan {
        name: "dbbench_fixture_load".into(),
        storage: StorageSpec::DEFAULT,
        volumes: Default::default(),
        work_dir: work_dir.clone(),
        scale: scale.clone(),
    };
    let database = EmbeddedBackend::new().create(&plan).await?;
    let mut conn = database.connect().await?;
    let started = Instant::now();
    let rows = database
        .load_fixture(&mut conn, FixtureKind::Credit, &scale)
        .await?;
    let elapsed = started.elapsed().as_secs_f64();
    drop(conn);
    database.drop_database().await?;
    let _ = std::fs::remove_dir_all(&work_dir);
    println!(
        "credit fixture at scale {}: {rows} rows in {elapsed:.2} s ({:.0} rows/s)",
        scale.name,
        rows as f64 / elapsed
    );
    Ok(())
}
