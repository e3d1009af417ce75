//! Storage errors: what went wrong in one file of the layer, told to SQLite as a result code and
//! kept for the embedded backend, which turns it into a dbbench [`Error`] that names the file.
//!
//! SQLite only sees a number (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`); its message ("database or disk
//! is full") names no file. The layer therefore records the last error of each database in an
//! [`ErrorSlot`], and the backend replaces SQLite's message with the recorded one.

use crate::model::error::Error;
use rusqlite::ffi;
use std::os::raw::c_int;
use std::path::PathBuf;
use std::sync::Mutex;

/// A failure in one of the layer's files.
#[derive(Debug)]
pub enum StorageError {
    /// The file is full and its growth setting forbids growing (SQL Server's error 1105).
    Full {
        /// The file that is full.
        path: PathBuf,
        /// Its growth setting (`none`).
        growth: String,
    },
    /// The operating system refused an operation.
    Io {
        /// What the layer was doing ("cannot grow data file").
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

impl StorageError {
    /// An I/O error about `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StorageError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// Whether the error means "no more space": a file that may not grow, or a full disk.
    pub fn is_full(&self) -> bool {
        match self {
            StorageError::Full { .. } => true,
            StorageError::Io { source, .. } => matches!(
                source.raw_os_error(),
                Some(libc::ENOSPC) | Some(libc::EFBIG) | Some(libc::EDQUOT)
            ),
        }
    }

    /// The SQLite result code for this error; `io_code` is the operation's `SQLITE_IOERR_*`.
    pub fn sqlite_code(&self, io_code: c_int) -> c_int {
        if self.is_full() {
            ffi::SQLITE_FULL
        } else {
            io_code
        }
    }

    /// The dbbench error the user sees.
    pub fn into_error(self) -> Error {
        match self {
            StorageError::Full { path, growth } => Error::FileFull { path, growth },
            StorageError::Io {
                action,
                path,
                source,
            } => Error::Io {
                action,
                path,
                source,
            },
        }
    }
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::Full { path, growth } => write!(
                f,
                "file `{}` is full and its growth is {growth}",
                path.display()
            ),
            StorageError::Io {
                action,
                path,
                source,
            } => write!(f, "{action} `{}`: {source}", path.display()),
        }
    }
}

/// The last storage error of one database, kept until the backend asks for it.
#[derive(Debug, Default)]
pub struct ErrorSlot {
    last: Mutex<Option<StorageError>>,
}

impl ErrorSlot {
    /// Remembers `error` (replacing an older one) and returns its SQLite code.
    pub fn record(&self, error: StorageError, io_code: c_int) -> c_int {
        let code = error.sqlite_code(io_code);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
        code
    }

    /// Takes the recorded error, if any.
    pub fn take(&self) -> Option<StorageError> {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// The dbbench error for a failed SQLite call: the recorded storage error when SQLite failed
    /// because of the storage (disk full or I/O error), otherwise SQLite's own error.
    pub fn explain(&self, error: rusqlite::Error) -> Error {
        let storage_failure = matches!(
            error.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DiskFull) | Some(rusqlite::ErrorCode::SystemIoFailure)
        );
        match storage_failure.then(|| self.take()).flatten() {
            Some(recorded) => recorded.into_error(),
            None => Error::from(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_errors_become_sqlite_full_and_name_the_file() {
        let slot = ErrorSlot::default();
        let code = slot.record(
            StorageError::Full {
                path: "/x/db_data_1.mdf".into(),
                growth: "none".into(),
            },
            ffi::SQLITE_IOERR_WRITE,
        );
        assert_eq!(code, ffi::SQLITE_FULL);
        let sqlite = rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_FULL), None);
        let message = slot.explain(sqlite).to_string();
        assert!(
            message.contains("/x/db_data_1.mdf") && message.contains("is full"),
            "{message}"
        );
        assert!(slot.take().is_none(), "the error is reported once");
    }

    #[test]
    fn a_full_disk_is_sqlite_full_other_failures_keep_their_code() {
        let disk = StorageError::io(
            "cannot grow data file",
            "/x/f",
            std::io::Error::from_raw_os_error(libc::ENOSPC),
        );
        assert_eq!(disk.sqlite_code(ffi::SQLITE_IOERR_WRITE), ffi::SQLITE_FULL);
        let eio = StorageError::io(
            "cannot write",
            "/x/f",
            std::io::Error::from_raw_os_error(libc::EIO),
        );
        assert_eq!(
            eio.sqlite_code(ffi::SQLITE_IOERR_WRITE),
            ffi::SQLITE_IOERR_WRITE
        );
        let other = rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_CONSTRAINT), None);
        assert!(matches!(
            ErrorSlot::default().explain(other),
            Error::Database {
                system: "SQLite",
                ..
            }
        ));
    }
}
