//! A burst of other work during one window (two busy loops for the length of that window, as a
//! shell command or an indexer makes): the window is set aside and its repetition measured again
//! at once, in its place, and the verdict stands. Its own test binary, so that no other test's
//! busy loops run beside it; on a machine already busy with other work every window is disturbed,
//! and the test says so and checks nothing more.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::{summary, BodyFuture, Volumes};
use dbbench_core::{Scale, Session};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

/// Two niced busy loops that end by themselves after 20 s; the shell that starts them exits at
/// once, so they are reparented away from this process (dbbench counts its own descendants as
/// its own). Their process ids.
fn burners_start() -> Vec<u32> {
    let script = "for i in 1 2; do nice -n 19 timeout 20 sh -c 'while :; do :; done' \
                  >/dev/null 2>&1 & echo $!; done";
    let out = Command::new("sh")
        .args(["-c", script])
        .stdout(Stdio::piped())
        .output()
        .expect("sh runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Stops the burners when dropped, however the test ends.
struct Burners(Vec<u32>);

impl Drop for Burners {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

/// Bodies run so far by [`inserts_with_a_burst`].
static BODIES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// As [`inserts`], but the third body (round 1's first cell) runs beside two busy loops that it
/// stops when it returns: one disturbed window, a burst, as a shell command or an indexer makes.
fn inserts_with_a_burst(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let n = BODIES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let burst = (n == 2).then(|| Burners(burners_start()));
        db.execute("CREATE TABLE t (id integer PRIMARY KEY, payload text)")
            .await?;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(400) {
            db.execute("INSERT INTO t (payload) VALUES ('0123456789abcdef')")
                .await?;
        }
        drop(burst);
        Ok(())
    })
}

support::benchmark! {
    static BURST = inserts_with_a_burst,
    title: "burst",
    run: RunSpec {
        repeat: 3,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [cell("a", StorageSpec::DEFAULT), cell("b", StorageSpec::DEFAULT)],
}

#[cfg(target_os = "linux")]
#[test]
fn a_window_a_burst_disturbed_is_set_aside_and_measured_again_in_its_place() {
    let ctx = context("burst", Scale::parse("0.001").unwrap(), Volumes::default());
    let result = run_embedded(&BURST, &ctx);
    // The burst was the third body: sequence 2. Any other disturbed window is the machine's own.
    let busy_anyway: Vec<_> = result
        .cells
        .iter()
        .flat_map(|c| c.runs.iter())
        .filter(|r| r.sequence != 2)
        .filter_map(|r| r.interference.as_ref().filter(|i| i.disturbed()))
        .collect();
    if let Some(seen) = busy_anyway.first() {
        println!(
            "skipped: the machine was busy besides the burst ({}), so which window the burst \
             disturbed cannot be told",
            seen.disturbed_by.join("; ")
        );
        return;
    }

    let aside: Vec<_> = result.cells.iter().flat_map(|c| c.set_aside()).collect();
    assert_eq!(aside.len(), 1, "one window set aside");
    assert_eq!(aside[0].sequence, 2, "the burst's");
    let why = aside[0].set_aside.as_deref().unwrap();
    assert!(
        why.starts_with("measured again: other processes used"),
        "{why}"
    );
    // Measured again in its place: the same repetition, fork and position, and it counts.
    let owner = result
        .cells
        .iter()
        .find(|c| c.set_aside().next().is_some())
        .unwrap();
    let again: Vec<_> = owner
        .measured()
        .filter(|r| r.index == aside[0].index)
        .collect();
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].fork, again[0].position),
        (aside[0].fork, aside[0].position)
    );
    assert!(again[0].sequence == aside[0].sequence + 1, "at once");
    assert!(!again[0].interference.as_ref().unwrap().disturbed());
    for cell in &result.cells {
        assert_eq!(
            cell.measured().count(),
            3,
            "{} keeps its three rounds",
            cell.name
        );
    }

    // The verdict is not voided by the burst, and the table says what was measured again.
    let text = summary::render(&result);
    assert!(!text.contains("the machine was busy"), "{text}");
    assert!(
        text.contains("measured again: 1 window the busy-machine guard found disturbed"),
        "{text}"
    );
    // The results file keeps the set-aside window, marked.
    let json = std::fs::read_to_string(
        ctx.work_dir
            .join("results")
            .join(format!("{}.json", BURST.file_stem())),
    )
    .unwrap();
    assert_eq!(json.matches("\"set_aside\"").count(), 1, "{json}");
}
