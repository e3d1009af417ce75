//! Every wait dbbench makes on a server, bounded: the one table of deadlines (what each bounds,
//! its default, the variable that sets it) and [`bounded`], which enforces one on the client side.
//!
//! Why client-side timers: a server that stops answering without closing its connections (a hung
//! disk, a network partition, a stopped process) answers neither a statement nor the cancel
//! request for it, nor the teardown's `DROP DATABASE`; a limit the server enforces
//! (`statement_timeout`, a login timeout) never fires then. So each wait runs under
//! `tokio::time::timeout` (or a thread's clock, for blocking waits such as a managed server's
//! start and stop), which holds whatever the server does.
//!
//! After a signal, every deadline is also cut to what is left of the interrupt's budget
//! ([`Deadline::Interrupt`]), so one Ctrl-C ends the run in bounded time however many waits
//! remain; the signal thread exits the process when the budget is spent (`util::signals`).
//!
//! The body's statements are bounded by the benchmark's declared `timeout`, not by this table.
//! `docs/deadlines.md` lists the same rows; `tests/deadlines_doc.rs` checks it against
//! [`Deadline::ALL`].

use crate::model::error::{Error, Result};
use std::future::Future;
use std::time::Duration;

/// One kind of wait on a server, and its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// Opening a connection, login included.
    Connect,
    /// Creating a repetition's database and loading its fixture.
    Setup,
    /// The measured window's opening reads (checkpoint, statistics) and its closing reads.
    Window,
    /// How long a stopped body may take to return once its statements were cancelled (the
    /// cancel request's reply), before its connection is abandoned.
    Cancel,
    /// Dropping a repetition's database (on a fresh connection).
    Teardown,
    /// Closing a connection (PostgreSQL's Terminate).
    Close,
    /// A managed server's start until it accepts connections.
    ServerStart,
    /// A managed server's fast shutdown, before its processes are killed.
    ServerStop,
    /// From the first Ctrl-C or SIGTERM to the process's exit.
    Interrupt,
    /// Waiting for another measurement on this machine to release the machine lock.
    MachineLock,
    /// Waiting for another process publishing the same benchmark's views to finish.
    Publish,
}

/// What is kept back from the interrupt's budget for the waits that follow the one being cut
/// (stopping a managed server, removing its directories, writing the store), so the orderly
/// path ends before the signal thread's forced exit.
const INTERRUPT_RESERVE: Duration = Duration::from_secs(4);

impl Deadline {
    /// Every deadline, in the order the docs list them.
    pub const ALL: [Deadline; 11] = [
        Deadline::Connect,
        Deadline::Setup,
        Deadline::Window,
        Deadline::Cancel,
        Deadline::Teardown,
        Deadline::Close,
        Deadline::ServerStart,
        Deadline::ServerStop,
        Deadline::Interrupt,
        Deadline::MachineLock,
        Deadline::Publish,
    ];

    /// The environment variable that sets it (a duration: `500ms`, `30s`, `10m`, `2h`).
    pub fn env(self) -> &'static str {
        match self {
            Deadline::Connect => "DBBENCH_DEADLINE_CONNECT",
            Deadline::Setup => "DBBENCH_DEADLINE_SETUP",
            Deadline::Window => "DBBENCH_DEADLINE_WINDOW",
            Deadline::Cancel => "DBBENCH_DEADLINE_CANCEL",
            Deadline::Teardown => "DBBENCH_DEADLINE_TEARDOWN",
            Deadline::Close => "DBBENCH_DEADLINE_CLOSE",
            Deadline::ServerStart => "DBBENCH_DEADLINE_SERVER_START",
            Deadline::ServerStop => "DBBENCH_DEADLINE_SERVER_STOP",
            Deadline::Interrupt => "DBBENCH_DEADLINE_INTERRUPT",
            Deadline::MachineLock => "DBBENCH_DEADLINE_MACHINE_LOCK",
            Deadline::Publish => "DBBENCH_DEADLINE_PUBLISH",
        }
    }

    /// Its value when the variable is not set.
    pub fn default_limit(self) -> Duration {
        let s = Duration::from_secs;
        match self {
            Deadline::Connect => s(30),
            Deadline::Setup => s(30 * 60),
            Deadline::Window => s(10 * 60),
            Deadline::Cancel => s(5),
            Deadline::Teardown => s(60),
            Deadline::Close => s(5),
            Deadline::ServerStart => s(60),
            Deadline::ServerStop => s(20),
            Deadline::Interrupt => s(25),
            Deadline::MachineLock => s(60 * 60),
            Deadline::Publish => s(60),
        }
    }

    /// What it bounds, as the error message and the docs say it.
    pub fn bounds(self) -> &'static str {
        match self {
            Deadline::Connect => "opening a connection, login included",
            Deadline::Setup => "creating a repetition's database and loading its fixture",
            Deadline::Window => "the measured window's opening reads (checkpoint, statistics) and its closing reads",
            Deadline::Cancel => "the reply to the cancel request after the body's timeout or a signal, before the connection is abandoned",
            Deadline::Teardown => "dropping a repetition's database, on a fresh connection",
            Deadline::Close => "closing a connection",
            Deadline::ServerStart => "a managed server's start, until it accepts connections",
            Deadline::ServerStop => "a managed server's fast shutdown, before its processes are killed (SIGKILL)",
            Deadline::Interrupt => "from the first Ctrl-C or SIGTERM to the process's exit",
            Deadline::MachineLock => "waiting for another measurement on this machine to release the machine-wide measurement lock",
            Deadline::Publish => "waiting for another process writing the same benchmark's results files, CSV, report and charts to finish",
        }
    }

    /// The value set by its variable, or the default; a value that is no duration is an error
    /// that names the variable.
    pub fn configured(self) -> Result<Duration> {
        match std::env::var(self.env()) {
            Ok(text) => parse(self, &text),
            Err(_) => Ok(self.default_limit()),
        }
    }

    /// The limit a wait starting now gets: the configured value, cut to what is left of the
    /// interrupt's budget once a signal arrived.
    pub fn limit(self) -> Result<Duration> {
        let own = self.configured()?;
        if self == Deadline::Interrupt {
            return Ok(own);
        }
        Ok(match interrupt_left()? {
            Some(left) => own.min(left.saturating_sub(INTERRUPT_RESERVE)),
            None => own,
        })
    }
}

/// `text` as the value of `deadline`'s variable.
fn parse(deadline: Deadline, text: &str) -> Result<Duration> {
    dbbench_options::size::parse_duration(text.trim())
        .map(Duration::from_millis)
        .map_err(|_| {
            Error::Config(format!(
                "{}={text:?} is not a duration: write a positive number followed by ms, s, m or h \
                 (e.g. {}={})",
                deadline.env(),
                deadline.env(),
                spoken_env(deadline.default_limit())
            ))
        })
}

/// What is left of the interrupt's budget, once a signal arrived.
fn interrupt_left() -> Result<Option<Duration>> {
    let Some(at) = crate::util::signals::received_at() else {
        return Ok(None);
    };
    let budget = Deadline::Interrupt.configured()?;
    Ok(Some(budget.saturating_sub(at.elapsed())))
}

/// `5 s`, `1.5 s`, `500 ms`: a duration in a sentence.
pub fn spoken(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", ms as f64 / 1000.0)
    }
}

/// `60s`, `500ms`: a duration as its variable takes it.
fn spoken_env(d: Duration) -> String {
    spoken(d).replace(' ', "")
}

/// The error of a wait that passed its deadline: the server did not answer `doing` within
/// `limit`.
pub fn unanswered(deadline: Deadline, limit: Duration, doing: &str) -> Error {
    Error::msg(format!(
        "the server stopped answering: no reply within {} while {doing} ({} sets this limit)",
        spoken(limit),
        deadline.env()
    ))
}

/// Awaits `work` for at most `deadline`'s limit; past it, `work` is dropped (its connection with
/// it, which closes the socket) and the error says the server stopped answering while `doing`.
pub async fn bounded<T>(
    deadline: Deadline,
    doing: &str,
    work: impl Future<Output = Result<T>>,
) -> Result<T> {
    within(deadline, deadline.limit()?, doing, work).await
}

/// Awaits `work` for at most `limit`, which is `deadline`'s.
async fn within<T>(
    deadline: Deadline,
    limit: Duration,
    doing: &str,
    work: impl Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(limit, work).await {
        Ok(result) => result,
        Err(_) => Err(unanswered(deadline, limit, doing)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_with_the_duration_parser_and_bad_ones_name_the_variable() {
        assert_eq!(
            parse(Deadline::Teardown, "60s").unwrap(),
            Duration::from_secs(60)
        );
        assert_eq!(
            parse(Deadline::Cancel, " 500ms ").unwrap(),
            Duration::from_millis(500)
        );
        let err = parse(Deadline::Teardown, "sixty").unwrap_err().to_string();
        assert!(err.contains("DBBENCH_DEADLINE_TEARDOWN=\"sixty\""), "{err}");
        assert!(err.contains("DBBENCH_DEADLINE_TEARDOWN=60s"), "{err}");
        assert!(parse(Deadline::Connect, "0s").is_err());
    }

    #[test]
    fn every_deadline_has_its_own_variable_and_a_default() {
        for (i, a) in Deadline::ALL.iter().enumerate() {
            assert!(a.env().starts_with("DBBENCH_DEADLINE_"));
            assert!(a.default_limit() > Duration::ZERO);
            for b in &Deadline::ALL[i + 1..] {
                assert_ne!(a.env(), b.env());
            }
        }
        // The Ctrl-C budget covers the body's grace, one teardown's reserve and a margin under
        // the 30 s the user waits at most.
        assert!(Deadline::Interrupt.default_limit() <= Duration::from_secs(30));
        assert!(
            Deadline::Interrupt.default_limit()
                > Deadline::Cancel.default_limit() + INTERRUPT_RESERVE
        );
    }

    #[test]
    fn durations_read_as_a_sentence() {
        assert_eq!(spoken(Duration::from_secs(5)), "5 s");
        assert_eq!(spoken(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(spoken(Duration::from_millis(200)), "200 ms");
        assert_eq!(spoken_env(Duration::from_secs(60)), "60s");
    }

    #[tokio::test]
    async fn a_wait_past_its_deadline_ends_with_what_it_waited_for() {
        // A future that never finishes: the bound holds when nothing answers.
        let started = std::time::Instant::now();
        let err = within(
            Deadline::Connect,
            Duration::from_millis(50),
            "connecting to test",
            std::future::pending::<Result<()>>(),
        )
        .await
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "the server stopped answering: no reply within 50 ms while connecting to test \
             (DBBENCH_DEADLINE_CONNECT sets this limit)"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        let ok = bounded(Deadline::Connect, "x", async { Ok(7) })
            .await
            .unwrap();
        assert_eq!(ok, 7);
    }
}
