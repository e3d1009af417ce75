//! A TDS connection to SQL Server (tiberius over tokio) and the conversion of its values to
//! dbbench's backend-neutral [`Value`]s.

use super::connect::ConnectSettings;
#[cfg(any(test, feature = "_mssql_scripted"))]
use super::double::{link::ScriptedLink, Api, Reply, ScriptedServer};
use super::{errors, routing};
use crate::model::error::Result;
use crate::model::value::{Row, Value};
use std::borrow::Cow;
use std::sync::Arc;
use tiberius::ColumnData;
use tokio_util::compat::Compat;

/// The tiberius client type dbbench uses.
pub type TdsClient = tiberius::Client<Compat<tokio::net::TcpStream>>;

/// What a connection talks to: a real server, or (in test builds only) the scripted stand-in.
enum Link {
    Tds(Box<TdsClient>),
    /// The scripted server ([`super::double`]): compiled only for tests and the private
    /// `_mssql_scripted` feature, so that a user's build carries no test double.
    #[cfg(any(test, feature = "_mssql_scripted"))]
    Scripted(ScriptedLink),
}

/// One connection to SQL Server.
///
/// Routing (see [`routing`](super::routing)): `batch`, `query_all` and `query` without
/// parameters go as a plain batch (`simple_query`); `execute` and `query` with parameters go as
/// an RPC through `sp_executesql`, except that a statement that changes `@@TRANCOUNT` always goes
/// as a plain batch, because SQL Server rejects a changed transaction count across an EXECUTE
/// (error 266), and so does a session setting (`SET …`, `USE …`), which SQL Server would undo
/// when the EXECUTE returns.
pub struct MssqlConnection {
    link: Link,
    settings: ConnectSettings,
    /// The database's stop switch, for connections a body uses.
    pub(crate) cancel: Option<Arc<crate::util::cancel::Cancel>>,
    /// Set while this connection is open; its `KILL` registered with the stop switch checks it
    /// and sends nothing once the connection has closed (see [`super::cancel::register`]).
    pub(crate) open: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// For a load worker's connection: where it reports its session's waits before it closes
    /// ([`super::evidence::load_waits`]).
    pub(crate) load_waits: Option<super::evidence::load_waits::Shared>,
}

impl Drop for MssqlConnection {
    fn drop(&mut self) {
        // First: from here the session id is free for the server to hand to anyone, so the
        // stop switch must no longer end it.
        if let Some(open) = &self.open {
            open.store(false, std::sync::atomic::Ordering::SeqCst);
        }
        // Then the link closes (a scripted one ends its server session as it drops).
    }
}

impl std::fmt::Debug for MssqlConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MssqlConnection({})", self.settings.server())
    }
}

impl MssqlConnection {
    pub(crate) fn new(client: TdsClient, settings: ConnectSettings) -> Self {
        MssqlConnection {
            link: Link::Tds(Box::new(client)),
            settings,
            cancel: None,
            open: None,
            load_waits: None,
        }
    }

    /// The tiberius client, for code that needs SQL Server directly (TVPs, ad-hoc checks); a
    /// scripted connection has none.
    pub fn raw(&mut self) -> Result<&mut TdsClient> {
        match &mut self.link {
            Link::Tds(client) => Ok(client),
            #[cfg(any(test, feature = "_mssql_scripted"))]
            Link::Scripted(..) => Err(crate::model::error::Error::msg(
                "a scripted connection has no TDS client",
            )),
        }
    }

    /// The settings this connection was opened with.
    pub fn settings(&self) -> &ConnectSettings {
        &self.settings
    }

    /// Runs one statement with `@P1`… parameters; returns the rows it changed. A statement that
    /// changes `@@TRANCOUNT` or a session setting goes as a plain batch (and reports 0 rows: a
    /// batch's row counts are not surfaced by tiberius).
    pub(crate) async fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        if routing::changes_trancount(sql) {
            if !params.is_empty() {
                return Err(crate::model::error::Error::Config(format!(
                    "`{}` opens or ends a transaction and takes parameters: SQL Server rejects a \
                     changed transaction count inside sp_executesql (error 266), and only \
                     sp_executesql carries parameters; send BEGIN/COMMIT/ROLLBACK as their own \
                     statements",
                    headline(sql)
                )));
            }
            self.batch(sql).await?;
            return Ok(0);
        }
        if routing::changes_session(sql) {
            if !params.is_empty() {
                return Err(crate::model::error::Error::Config(format!(
                    "`{}` changes a session setting (SET or USE) and takes parameters: only \
                     sp_executesql carries parameters, and SQL Server restores a SET option or \
                     the database changed inside it when it returns, so the setting would not \
                     last; send the SET or USE as a statement of its own, without parameters",
                    headline(sql)
                )));
            }
            // A plain batch, so the setting lasts for the rest of the session.
            self.batch(sql).await?;
            return Ok(0);
        }
        let settings = &self.settings;
        match &mut self.link {
            #[cfg(any(test, feature = "_mssql_scripted"))]
            Link::Scripted(link) => match link.answer(settings, Api::Rpc, sql).await? {
                Reply::Affected(n) => Ok(n),
                _ => Ok(0),
            },
            Link::Tds(client) => {
                let data: Vec<ColumnData<'_>> = params.iter().map(to_column_data).collect();
                let refs: Vec<&dyn tiberius::ToSql> =
                    data.iter().map(|d| d as &dyn tiberius::ToSql).collect();
                match client.execute(sql, &refs).await {
                    Ok(result) => Ok(result.total()),
                    Err(e) => Err(fail(settings, e, sql)),
                }
            }
        }
    }

    /// Runs a batch of statements (DDL, DBCC, several statements): every result is drained so
    /// that a server error anywhere in the batch is reported.
    /// A load worker is done with this connection: its session's waits go to its database
    /// before the session ends ([`super::evidence::load_waits`]); nothing for other connections.
    /// A failed read leaves the worker unreported, which the window then says.
    pub(crate) async fn finish(&mut self) -> Result<()> {
        let Some(shared) = self.load_waits.take() else {
            return Ok(());
        };
        let waits = super::evidence::session_waits::snapshot(self)
            .await
            .map_err(crate::model::error::Error::msg)?;
        super::evidence::load_waits::reported(&shared, &waits);
        Ok(())
    }

    pub(crate) async fn batch(&mut self, sql: &str) -> Result<()> {
        self.query_all(sql).await.map(|_| ())
    }

    /// Runs a batch and returns every result set it produced.
    pub(crate) async fn query_all(&mut self, sql: &str) -> Result<Vec<Vec<Row>>> {
        let settings = &self.settings;
        match &mut self.link {
            #[cfg(any(test, feature = "_mssql_scripted"))]
            Link::Scripted(link) => match link.answer(settings, Api::Batch, sql).await? {
                Reply::Sets(sets) => Ok(sets),
                _ => Ok(Vec::new()),
            },
            Link::Tds(client) => {
                let stream = match client.simple_query(sql).await {
                    Ok(stream) => stream,
                    Err(e) => return Err(fail(settings, e, sql)),
                };
                match stream.into_results().await {
                    Ok(sets) => Ok(sets.into_iter().map(convert_rows).collect()),
                    Err(e) => Err(fail(settings, e, sql)),
                }
            }
        }
    }

    /// Runs a query with `@P1`… parameters and returns the rows of its first result set.
    pub(crate) async fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        if params.is_empty() {
            return Ok(self
                .query_all(sql)
                .await?
                .into_iter()
                .next()
                .unwrap_or_default());
        }
        let settings = &self.settings;
        match &mut self.link {
            #[cfg(any(test, feature = "_mssql_scripted"))]
            Link::Scripted(link) => match link.answer(settings, Api::Rpc, sql).await? {
                Reply::Sets(sets) => Ok(sets.into_iter().next().unwrap_or_default()),
                _ => Ok(Vec::new()),
            },
            Link::Tds(client) => {
                let data: Vec<ColumnData<'_>> = params.iter().map(to_column_data).collect();
                let refs: Vec<&dyn tiberius::ToSql> =
                    data.iter().map(|d| d as &dyn tiberius::ToSql).collect();
                let stream = match client.query(sql, &refs).await {
                    Ok(stream) => stream,
                    Err(e) => return Err(fail(settings, e, sql)),
                };
                match stream.into_first_result().await {
                    Ok(rows) => Ok(convert_rows(rows)),
                    Err(e) => Err(fail(settings, e, sql)),
                }
            }
        }
    }

    /// Bulk-loads `rows` into `table` (TDS `INSERT BULK … WITH (TABLOCK)`); returns the rows
    /// the server confirmed.
    pub(crate) async fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: impl Iterator<Item = tiberius::TokenRow<'static>>,
    ) -> Result<u64> {
        let settings = self.settings.clone();
        let fail = |e| errors::map(&settings, e, &format!("bulk-loading into {table}"));
        match &mut self.link {
            #[cfg(any(test, feature = "_mssql_scripted"))]
            Link::Scripted(link) => {
                let count = rows.count() as u64;
                link.answer(
                    &settings,
                    Api::Bulk,
                    &format!(
                        "INSERT BULK {table} ({}) -- {count} rows",
                        columns.join(", ")
                    ),
                )
                .await?;
                Ok(count)
            }
            Link::Tds(client) => {
                let mut request = client
                    .bulk_insert_with_options(
                        table,
                        columns,
                        tiberius::SqlBulkCopyOption::TableLock.into(),
                        &[],
                    )
                    .await
                    .map_err(fail)?;
                for row in rows {
                    request.send(row).await.map_err(fail)?;
                }
                Ok(request.finalize().await.map_err(fail)?.total())
            }
        }
    }
}

/// Connections to the scripted server ([`super::double`]), for tests: compiled only with them
/// and the private `_mssql_scripted` feature.
#[cfg(any(test, feature = "_mssql_scripted"))]
impl MssqlConnection {
    /// A connection to a scripted server (tests).
    pub fn scripted(server: ScriptedServer, settings: ConnectSettings) -> Self {
        Self::scripted_in(server, settings, "master")
    }

    /// A connection to database `database` of a scripted server (tests).
    pub fn scripted_in(server: ScriptedServer, settings: ConnectSettings, database: &str) -> Self {
        MssqlConnection {
            link: Link::Scripted(ScriptedLink::open(server, database)),
            settings,
            cancel: None,
            open: None,
            load_waits: None,
        }
    }
}

/// Maps a driver error raised while running `sql`.
fn fail(
    settings: &ConnectSettings,
    error: tiberius::error::Error,
    sql: &str,
) -> crate::model::error::Error {
    errors::map(settings, error, &format!("running `{}`", headline(sql)))
}

/// The first line of `sql`, shortened, to say which statement failed.
pub fn headline(sql: &str) -> String {
    let line = sql.trim().lines().next().unwrap_or("").trim();
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(80).collect::<String>())
    } else {
        line.to_string()
    }
}

fn to_column_data(value: &Value) -> ColumnData<'_> {
    match value {
        Value::Null => ColumnData::String(None),
        Value::Int(v) => ColumnData::I64(Some(*v)),
        Value::Float(v) => ColumnData::F64(Some(*v)),
        Value::Text(v) => ColumnData::String(Some(Cow::Borrowed(v.as_str()))),
        Value::Blob(v) => ColumnData::Binary(Some(Cow::Borrowed(v.as_slice()))),
    }
}

fn convert_rows(rows: Vec<tiberius::Row>) -> Vec<Row> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let columns: Arc<[String]> = first
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    rows.into_iter()
        .map(|row| {
            let values = row.into_iter().map(|d| to_value(&d)).collect();
            Row::new(columns.clone(), values)
        })
        .collect()
}

/// A tiberius cell as a dbbench [`Value`]. Dates and times become ISO text; decimals become
/// integers when they have no fraction and floats otherwise.
pub fn to_value(data: &ColumnData<'_>) -> Value {
    use tiberius::time::{Date, Time};
    fn int(v: Option<impl Into<i64>>) -> Value {
        v.map_or(Value::Null, |v| Value::Int(v.into()))
    }
    fn text(v: Option<String>) -> Value {
        v.map_or(Value::Null, Value::Text)
    }
    let time_text = |t: Time| {
        let nanos = t.increments() as u128 * 10u128.pow(9u32.saturating_sub(t.scale() as u32));
        clock((nanos / 1_000_000) as u64)
    };
    let date_text = |d: Date| civil_date(d.days() as i64 - DAYS_0001_TO_1970);
    match data {
        ColumnData::U8(v) => int(*v),
        ColumnData::I16(v) => int(*v),
        ColumnData::I32(v) => int(*v),
        ColumnData::I64(v) => int(*v),
        ColumnData::F32(v) => v.map_or(Value::Null, |v| Value::Float(v as f64)),
        ColumnData::F64(v) => v.map_or(Value::Null, Value::Float),
        ColumnData::Bit(v) => v.map_or(Value::Null, |b| Value::Int(b as i64)),
        ColumnData::String(v) => text(v.as_ref().map(|s| s.to_string())),
        ColumnData::Guid(v) => text(v.map(|g| g.to_string())),
        ColumnData::Binary(v) => v.as_ref().map_or(Value::Null, |b| Value::Blob(b.to_vec())),
        ColumnData::Numeric(v) => v.map_or(Value::Null, |n| {
            if n.scale() == 0 {
                i64::try_from(n.value()).map_or(Value::Float(n.value() as f64), Value::Int)
            } else {
                Value::Float(n.value() as f64 / 10f64.powi(n.scale() as i32))
            }
        }),
        ColumnData::Xml(v) => text(v.as_ref().map(|x| x.to_string())),
        ColumnData::DateTime(v) => text(v.map(|dt| {
            let ms = (dt.seconds_fragments() as u64 * 1000).div_ceil(300);
            format!(
                "{} {}",
                civil_date(dt.days() as i64 - DAYS_1900_TO_1970),
                clock(ms)
            )
        })),
        ColumnData::SmallDateTime(v) => text(v.map(|dt| {
            format!(
                "{} {}",
                civil_date(dt.days() as i64 - DAYS_1900_TO_1970),
                clock(dt.seconds_fragments() as u64 * 60_000)
            )
        })),
        ColumnData::Time(v) => text(v.map(time_text)),
        ColumnData::Date(v) => text(v.map(date_text)),
        ColumnData::DateTime2(v) => {
            text(v.map(|dt| format!("{} {}", date_text(dt.date()), time_text(dt.time()))))
        }
        ColumnData::DateTimeOffset(v) => text(v.map(|dto| {
            let dt = dto.datetime2();
            let off = dto.offset();
            format!(
                "{} {} {}{:02}:{:02}",
                date_text(dt.date()),
                time_text(dt.time()),
                if off < 0 { '-' } else { '+' },
                off.unsigned_abs() / 60,
                off.unsigned_abs() % 60
            )
        })),
    }
}

pub use crate::util::calendar::civil_date;

/// Days from 1900-01-01 (SQL Server's `datetime` epoch) to 1970-01-01.
pub const DAYS_1900_TO_1970: i64 = 25_567;
/// Days from 0001-01-01 (the `date`/`datetime2` epoch) to 1970-01-01.
pub const DAYS_0001_TO_1970: i64 = 719_162;

/// `hh:mm:ss.fff` of `ms` milliseconds after midnight.
fn clock(ms: u64) -> String {
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        (ms / 60_000) % 60,
        (ms / 1000) % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests;
