//! The `dbbench` SQLite VFS: a shim over the default (unix) VFS that serves the main database
//! file from the data files and the WAL from the log of the database's [`Store`].
//!
//! - The main database file is backed by an *anchor*: the real, empty file SQLite names, opened
//!   with the default VFS. Locks and the WAL's shared memory (`xShm*`, the `-shm` file) are
//!   delegated to it, so several connections and threads share one database exactly as with stock
//!   SQLite. Reads, writes, size and sync go to [`super::data_files::DataFiles`].
//! - The WAL (`<anchor>-wal`, which never exists on disk) is served from
//!   [`super::log_file::LogFile`]; "deleting" it clears its header, "truncating" it does nothing.
//! - Every other file (rollback journal, temporary files) and every database that is not in the
//!   registry goes to the default VFS unchanged: it is opened directly in the memory SQLite gave
//!   us, so it costs nothing.
//!
//! The files' I/O methods are in `io_methods`; they allocate nothing and take no lock
//! for extents already placed.

use super::io_methods::{anchor, VfsFile, HEADER, LOG_METHODS, MAIN_METHODS};
use super::registry;
use super::store::Store;
use crate::model::error::{Error, Result};
use rusqlite::ffi;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::{Arc, OnceLock};

/// The name the VFS is registered under.
pub const VFS_NAME: &CStr = c"dbbench";

struct DefaultVfs(*mut ffi::sqlite3_vfs);
// SAFETY: SQLite's VFS objects are immutable once registered and safe to use from any thread.
unsafe impl Send for DefaultVfs {}
// SAFETY: as above.
unsafe impl Sync for DefaultVfs {}

static DEFAULT: OnceLock<std::result::Result<DefaultVfs, String>> = OnceLock::new();

/// Registers the VFS (once per process) and returns the default VFS it wraps.
fn base() -> Result<*mut ffi::sqlite3_vfs> {
    let registered = DEFAULT.get_or_init(|| {
        // SAFETY: FFI calls into SQLite with valid arguments; the registered VFS is leaked, so it
        // outlives every connection.
        unsafe {
            ffi::sqlite3_initialize();
            let default = ffi::sqlite3_vfs_find(ptr::null());
            if default.is_null() {
                return Err("SQLite has no default VFS".into());
            }
            let d = &*default;
            let vfs = Box::new(ffi::sqlite3_vfs {
                iVersion: 3,
                szOsFile: HEADER as c_int + d.szOsFile,
                mxPathname: d.mxPathname,
                pNext: ptr::null_mut(),
                zName: VFS_NAME.as_ptr(),
                pAppData: default.cast(),
                xOpen: Some(x_open),
                xDelete: Some(x_delete),
                xAccess: Some(x_access),
                xFullPathname: Some(x_full_pathname),
                xDlOpen: Some(x_dl_open),
                xDlError: Some(x_dl_error),
                xDlSym: Some(x_dl_sym),
                xDlClose: Some(x_dl_close),
                xRandomness: Some(x_randomness),
                xSleep: Some(x_sleep),
                xCurrentTime: Some(x_current_time),
                xGetLastError: Some(x_get_last_error),
                xCurrentTimeInt64: Some(x_current_time_int64),
                xSetSystemCall: None,
                xGetSystemCall: None,
                xNextSystemCall: None,
            });
            let rc = ffi::sqlite3_vfs_register(Box::into_raw(vfs), 0);
            if rc != ffi::SQLITE_OK {
                return Err(format!(
                    "cannot register the dbbench VFS: SQLite error {rc}"
                ));
            }
            Ok(DefaultVfs(default))
        }
    });
    match registered {
        Ok(d) => Ok(d.0),
        Err(e) => Err(Error::msg(e.clone())),
    }
}

/// Registers the VFS; idempotent.
pub fn register() -> Result<()> {
    base().map(|_| ())
}

/// The full path of `path` as SQLite computes it: the registry's key.
pub fn full_pathname(path: &Path) -> Result<String> {
    let base = base()?;
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::Config(format!("`{}` contains a NUL byte", path.display())))?;
    // SAFETY: `base` is the registered default VFS; the output buffer is mxPathname + 1 bytes.
    unsafe {
        let mut out = vec![0 as c_char; (*base).mxPathname as usize + 1];
        let full = (*base)
            .xFullPathname
            .ok_or_else(|| Error::msg("no xFullPathname"))?;
        let rc = full(base, c_path.as_ptr(), out.len() as c_int, out.as_mut_ptr());
        if rc & 0xff != ffi::SQLITE_OK {
            return Err(Error::msg(format!(
                "SQLite cannot resolve the path `{}` (error {rc})",
                path.display()
            )));
        }
        Ok(CStr::from_ptr(out.as_ptr()).to_string_lossy().into_owned())
    }
}

unsafe fn default_of(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    (*vfs).pAppData.cast()
}

/// The store of the database named `name` (a main database path, or its WAL's with `-wal`).
unsafe fn lookup(name: *const c_char, wal: bool) -> Option<Arc<Store>> {
    if name.is_null() {
        return None;
    }
    let name = CStr::from_ptr(name).to_str().ok()?;
    let key = if wal {
        name.strip_suffix("-wal")?
    } else {
        name
    };
    registry::find(key)
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let base = default_of(vfs);
    let Some(open) = (*base).xOpen else {
        return ffi::SQLITE_CANTOPEN;
    };
    let main = flags & ffi::SQLITE_OPEN_MAIN_DB != 0;
    let wal = flags & ffi::SQLITE_OPEN_WAL != 0;
    let store = if main || wal { lookup(name, wal) } else { None };
    let Some(store) = store else {
        return open(base, name, file, flags, out_flags);
    };
    let head = file.cast::<VfsFile>();
    (*head).base.pMethods = ptr::null();
    if main {
        let anchor = anchor(file);
        let rc = open(base, name, anchor, flags, out_flags);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        ptr::write(&raw mut (*head).store, Arc::into_raw(store));
        (*head).base.pMethods = &MAIN_METHODS;
    } else {
        ptr::write(&raw mut (*head).store, Arc::into_raw(store));
        (*head).base.pMethods = &LOG_METHODS;
        if !out_flags.is_null() {
            *out_flags = flags;
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    if let Some(store) = lookup(name, true) {
        return match store.log.clear() {
            Ok(()) => ffi::SQLITE_OK,
            Err(e) => store.errors.record(e, ffi::SQLITE_IOERR_DELETE),
        };
    }
    let base = default_of(vfs);
    match (*base).xDelete {
        Some(f) => f(base, name, sync_dir),
        None => ffi::SQLITE_IOERR_DELETE,
    }
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    if let Some(store) = lookup(name, true) {
        return match store.log.holds_wal() {
            Ok(exists) => {
                *out = c_int::from(exists);
                ffi::SQLITE_OK
            }
            Err(e) => store.errors.record(e, ffi::SQLITE_IOERR_ACCESS),
        };
    }
    let base = default_of(vfs);
    match (*base).xAccess {
        Some(f) => f(base, name, flags, out),
        None => ffi::SQLITE_IOERR_ACCESS,
    }
}

/// Generates VFS methods that call the default VFS's method of the same name.
macro_rules! delegate {
    ($( $name:ident => $field:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty = $missing:expr ;)*) => {$(
        unsafe extern "C" fn $name(vfs: *mut ffi::sqlite3_vfs, $($arg: $ty),*) -> $ret {
            let base = default_of(vfs);
            match (*base).$field {
                Some(f) => f(base, $($arg),*),
                None => $missing,
            }
        }
    )*};
}

delegate! {
    x_full_pathname => xFullPathname(name: *const c_char, n: c_int, out: *mut c_char) -> c_int
        = ffi::SQLITE_CANTOPEN;
    x_dl_open => xDlOpen(name: *const c_char) -> *mut c_void = ptr::null_mut();
    x_dl_error => xDlError(n: c_int, msg: *mut c_char) -> () = ();
    x_dl_sym => xDlSym(handle: *mut c_void, symbol: *const c_char)
        -> Option<unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *mut c_void, *const c_char)> = None;
    x_dl_close => xDlClose(handle: *mut c_void) -> () = ();
    x_randomness => xRandomness(n: c_int, out: *mut c_char) -> c_int = 0;
    x_sleep => xSleep(micros: c_int) -> c_int = 0;
    x_current_time => xCurrentTime(out: *mut f64) -> c_int = ffi::SQLITE_ERROR;
    x_get_last_error => xGetLastError(n: c_int, out: *mut c_char) -> c_int = 0;
    x_current_time_int64 => xCurrentTimeInt64(out: *mut ffi::sqlite3_int64) -> c_int
        = ffi::SQLITE_ERROR;
}
