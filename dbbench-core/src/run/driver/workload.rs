//! What a load does: how much work, how it is cut into transactions and shared among workers,
//! and how fast it is offered (closed loop with optional think time, or open loop at a target
//! rate).

use super::crew::Execution;
use crate::model::error::{Error, Result};
use crate::model::load::{LoadConfig, WorkConfig};
use std::time::Duration;

/// The amount of work of a load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    /// This many statements in total, shared equally among the workers.
    Statements(u64),
    /// Enough statements to write `total` bytes when each statement writes `per_statement`
    /// bytes (rounded up), shared equally among the workers: the 1-TB article's
    /// "1/128 TB in each connection" is `Work::Bytes { total: 1 << 40, per_statement: 4200 }`
    /// with 128 workers.
    Bytes {
        /// Bytes over all workers.
        total: u64,
        /// Bytes one statement writes (the row size).
        per_statement: u64,
    },
    /// Transactions start until this much time has passed since the load started; counts are
    /// then measured, not planned.
    Duration(Duration),
}

impl Work {
    /// The statements this work plans over all workers, or `None` for a duration.
    pub fn statements(&self) -> Option<u64> {
        match *self {
            Work::Statements(n) => Some(n),
            Work::Bytes {
                total,
                per_statement,
            } => Some(total.div_ceil(per_statement.max(1))),
            Work::Duration(_) => None,
        }
    }
}

/// The description of a concurrent load: `C` workers, each with its own connection, running the
/// user's statement closure over its share of the work in transactions of `N` statements.
///
/// ```
/// use dbbench_core::driver::{Load, Work};
/// use std::time::Duration;
/// // The 1-TB article: 128 connections, 4.1 KB rows, transactions of 10 inserts.
/// let load = Load::new(128, Work::Bytes { total: 1 << 30, per_statement: 4200 })
///     .statements_per_transaction(10);
/// // 16 connections at an offered 500 transactions/s for ten seconds.
/// let paced = Load::new(16, Work::Duration(Duration::from_secs(10)))
///     .name("paced")
///     .target_rate(500.0);
/// ```
#[derive(Debug, Clone)]
pub struct Load {
    pub(crate) name: String,
    pub(crate) workers: u32,
    pub(crate) work: Work,
    pub(crate) statements_per_transaction: u32,
    pub(crate) think_time: Option<Duration>,
    pub(crate) target_rate: Option<f64>,
    pub(crate) lock_timeout: Option<Duration>,
    pub(crate) setup: Vec<String>,
    pub(crate) max_retries: u32,
    pub(crate) seed: u64,
    /// Forces an execution model; tests use it to run the task model on the embedded engine.
    pub(crate) execution: Option<Execution>,
}

/// The default seed of arrival times and back-off.
const DEFAULT_SEED: u64 = 0x10AD_D21F;

impl Load {
    /// `workers` concurrent workers sharing `work`, one statement per transaction, closed loop,
    /// named `load`.
    pub fn new(workers: u32, work: Work) -> Load {
        Load {
            name: "load".to_string(),
            workers,
            work,
            statements_per_transaction: 1,
            think_time: None,
            target_rate: None,
            lock_timeout: None,
            setup: Vec::new(),
            max_retries: 100,
            seed: DEFAULT_SEED,
            execution: None,
        }
    }

    /// Names the load (default `load`). The name prefixes its counts (`load_transactions`),
    /// values and series, so each load of one body needs its own.
    pub fn name(mut self, name: impl Into<String>) -> Load {
        self.name = name.into();
        self
    }

    /// Statements per transaction: the driver begins a transaction, calls the statement closure
    /// `n` times and commits.
    pub fn statements_per_transaction(mut self, n: u32) -> Load {
        self.statements_per_transaction = n;
        self
    }

    /// A pause of every worker after each of its transactions (closed loop).
    pub fn think_time(mut self, pause: Duration) -> Load {
        self.think_time = Some(pause);
        self
    }

    /// An open loop: transactions arrive at `per_second` over all workers, as a Poisson process
    /// (each worker an independent one at `per_second / workers`). A transaction that arrives
    /// while its worker is still busy starts late, and its latency counts from its arrival.
    pub fn target_rate(mut self, per_second: f64) -> Load {
        self.target_rate = Some(per_second);
        self
    }

    /// How long a statement waits for a lock before failing with a busy (SQLite) or timeout
    /// (SQL Server) error; the connection's default otherwise.
    pub fn lock_timeout(mut self, wait: Duration) -> Load {
        self.lock_timeout = Some(wait);
        self
    }

    /// Statements every worker's connection runs once after connecting, before the warm-up and
    /// outside the measurement: session options such as `SET NOCOUNT ON` or
    /// `PRAGMA synchronous = OFF`. May be given several times; they run in order.
    pub fn setup(mut self, sql: impl Into<String>) -> Load {
        self.setup.push(sql.into());
        self
    }

    /// How often one transaction is retried after a busy or deadlock error (default 100) before
    /// the load fails.
    pub fn max_retries(mut self, retries: u32) -> Load {
        self.max_retries = retries;
        self
    }

    /// The seed of the arrival times and retry back-off, so paced loads repeat exactly.
    pub fn seed(mut self, seed: u64) -> Load {
        self.seed = seed;
        self
    }

    /// The load's name.
    pub fn load_name(&self) -> &str {
        &self.name
    }

    /// Explains what is wrong with this load, if anything.
    pub fn validate(&self) -> Result<()> {
        let bad = |why: String| Err(Error::Config(format!("load `{}`: {why}", self.name)));
        if self.workers == 0 {
            return bad("needs at least one worker".into());
        }
        if self.statements_per_transaction == 0 {
            return bad("needs at least one statement per transaction".into());
        }
        if let Work::Bytes {
            per_statement: 0, ..
        } = self.work
        {
            return bad("`Work::Bytes` needs a statement size above zero".into());
        }
        if let Some(rate) = self.target_rate {
            if !(rate.is_finite() && rate > 0.0) {
                return bad(format!("the target rate must be above zero, found {rate}"));
            }
            if self.think_time.is_some() {
                return bad(
                    "a think time (closed loop) and a target rate (open loop) exclude each other"
                        .into(),
                );
            }
        }
        Ok(())
    }

    /// The statements each worker gets, by worker: equal shares, the first workers taking one
    /// more when the total does not divide. `None` for a duration.
    pub fn shares(&self) -> Option<Vec<u64>> {
        let total = self.work.statements()?;
        let workers = u64::from(self.workers.max(1));
        let (base, extra) = (total / workers, total % workers);
        Some((0..workers).map(|w| base + u64::from(w < extra)).collect())
    }

    /// The configuration as recorded in the results.
    pub fn config(&self) -> LoadConfig {
        let shares = self.shares();
        let per_tx = u64::from(self.statements_per_transaction.max(1));
        LoadConfig {
            name: self.name.clone(),
            workers: self.workers,
            work: match self.work {
                Work::Statements(statements) => WorkConfig::Statements { statements },
                Work::Bytes {
                    total,
                    per_statement,
                } => WorkConfig::Bytes {
                    total_bytes: total,
                    statement_bytes: per_statement,
                },
                Work::Duration(d) => WorkConfig::Duration {
                    duration_s: d.as_secs_f64(),
                },
            },
            statements_per_transaction: self.statements_per_transaction,
            planned_statements: self.work.statements(),
            planned_transactions: shares
                .as_ref()
                .map(|s| s.iter().map(|n| n.div_ceil(per_tx)).sum()),
            worker_statements: shares.unwrap_or_default(),
            think_time_ms: self.think_time.map(|d| d.as_secs_f64() * 1e3),
            target_rate_per_s: self.target_rate,
            lock_timeout_ms: self.lock_timeout.map(|d| d.as_secs_f64() * 1e3),
            setup: self.setup.clone(),
            max_retries: self.max_retries,
            seed: self.seed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_equally_with_the_remainder_first() {
        let load = Load::new(4, Work::Statements(10));
        assert_eq!(load.shares(), Some(vec![3, 3, 2, 2]));
        let even = Load::new(16, Work::Statements(1600));
        assert!(even.shares().unwrap().iter().all(|&n| n == 100));
        let fewer = Load::new(5, Work::Statements(2));
        assert_eq!(fewer.shares(), Some(vec![1, 1, 0, 0, 0]));
    }

    #[test]
    fn bytes_become_whole_statements() {
        let work = Work::Bytes {
            total: 10_000,
            per_statement: 4_100,
        };
        assert_eq!(work.statements(), Some(3));
        assert_eq!(Work::Duration(Duration::from_secs(1)).statements(), None);
        let seed = Load::new(
            128,
            Work::Bytes {
                total: 128 * 4_100 * 1_000,
                per_statement: 4_100,
            },
        );
        assert!(seed.shares().unwrap().iter().all(|&n| n == 1_000));
    }

    #[test]
    fn config_plans_transactions_with_a_short_last_one() {
        let config = Load::new(3, Work::Statements(65))
            .statements_per_transaction(10)
            .config();
        assert_eq!(config.worker_statements, vec![22, 22, 21]);
        // 22 statements make 3 transactions (10, 10, 2); 21 make 3 as well.
        assert_eq!(config.planned_transactions, Some(9));
        assert_eq!(config.planned_statements, Some(65));
        let timed = Load::new(2, Work::Duration(Duration::from_millis(1500))).config();
        assert_eq!(timed.planned_transactions, None);
        assert_eq!(timed.work, WorkConfig::Duration { duration_s: 1.5 });
    }

    #[test]
    fn validation_explains_the_problem() {
        let err = |load: Load| load.validate().unwrap_err().to_string();
        assert!(err(Load::new(0, Work::Statements(1))).contains("at least one worker"));
        assert!(
            err(Load::new(1, Work::Statements(1)).statements_per_transaction(0))
                .contains("one statement per transaction")
        );
        assert!(err(Load::new(1, Work::Statements(1)).target_rate(0.0)).contains("above zero"));
        assert!(err(Load::new(1, Work::Statements(1))
            .target_rate(10.0)
            .think_time(Duration::from_millis(1)))
        .contains("exclude each other"));
        assert!(err(Load::new(
            1,
            Work::Bytes {
                total: 1,
                per_statement: 0
            }
        ))
        .contains("statement size"));
        assert!(Load::new(2, Work::Statements(4)).validate().is_ok());
    }
}
