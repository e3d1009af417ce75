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
//! The I/O methods allocate nothing and take no lock for extents already placed.

use super::registry;
use super::store::Store;
use crate::error::{Error, Result};
use rusqlite::ffi;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::{Arc, OnceLock};

/// The name the VFS is registered under.
pub const VFS_NAME: &CStr = c"dbbench";

/// The head of every file object the VFS serves itself; the anchor follows at [`HEADER`].
#[repr(C)]
struct VfsFile {
    base: ffi::sqlite3_file,
    store: *const Store,
}

const HEADER: usize = std::mem::size_of::<VfsFile>().next_multiple_of(16);

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

// ---- the main database file ------------------------------------------------------------------

unsafe fn anchor(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    file.cast::<u8>().add(HEADER).cast()
}

unsafe fn store<'a>(file: *mut ffi::sqlite3_file) -> &'a Store {
    &*(*file.cast::<VfsFile>()).store
}

unsafe fn anchor_methods<'a>(file: *mut ffi::sqlite3_file) -> &'a ffi::sqlite3_io_methods {
    &*(*anchor(file)).pMethods
}

/// Generates main-file methods that call the anchor's method of the same name.
macro_rules! on_anchor {
    ($( $name:ident => $field:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty = $missing:expr ;)*) => {$(
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file, $($arg: $ty),*) -> $ret {
            match anchor_methods(file).$field {
                Some(f) => f(anchor(file), $($arg),*),
                None => $missing,
            }
        }
    )*};
}

on_anchor! {
    main_lock => xLock(level: c_int) -> c_int = ffi::SQLITE_IOERR_LOCK;
    main_unlock => xUnlock(level: c_int) -> c_int = ffi::SQLITE_IOERR_UNLOCK;
    main_check_reserved => xCheckReservedLock(out: *mut c_int) -> c_int
        = ffi::SQLITE_IOERR_CHECKRESERVEDLOCK;
    main_sector_size => xSectorSize() -> c_int = 4096;
    main_device => xDeviceCharacteristics() -> c_int = 0;
    main_shm_map => xShmMap(page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void) -> c_int
        = ffi::SQLITE_IOERR_SHMMAP;
    main_shm_lock => xShmLock(offset: c_int, n: c_int, flags: c_int) -> c_int
        = ffi::SQLITE_IOERR_SHMLOCK;
    main_shm_barrier => xShmBarrier() -> () = ();
    main_shm_unmap => xShmUnmap(delete: c_int) -> c_int = ffi::SQLITE_OK;
}

unsafe extern "C" fn main_close(file: *mut ffi::sqlite3_file) -> c_int {
    let head = file.cast::<VfsFile>();
    let store = Arc::from_raw((*head).store);
    // A clean close leaves the map complete even when SQLite never synced (synchronous = OFF).
    if let Err(e) = store.data.persist_map(false) {
        store.errors.record(e, ffi::SQLITE_IOERR_WRITE);
    }
    let rc = match anchor_methods(file).xClose {
        Some(close) => close(anchor(file)),
        None => ffi::SQLITE_OK,
    };
    (*head).base.pMethods = ptr::null();
    drop(store);
    rc
}

unsafe extern "C" fn main_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    let store = store(file);
    let buf = std::slice::from_raw_parts_mut(buf.cast::<u8>(), amount.max(0) as usize);
    match store.data.read(buf, offset.max(0) as u64) {
        Ok(true) => ffi::SQLITE_OK,
        Ok(false) => ffi::SQLITE_IOERR_SHORT_READ,
        Err(e) => store.errors.record(e, ffi::SQLITE_IOERR_READ),
    }
}

unsafe extern "C" fn main_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    let store = store(file);
    let buf = std::slice::from_raw_parts(buf.cast::<u8>(), amount.max(0) as usize);
    match store.data.write(buf, offset.max(0) as u64) {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => store.errors.record(e, ffi::SQLITE_IOERR_WRITE),
    }
}

unsafe extern "C" fn main_truncate(
    file: *mut ffi::sqlite3_file,
    size: ffi::sqlite3_int64,
) -> c_int {
    store(file).data.truncate(size.max(0) as u64);
    ffi::SQLITE_OK
}

unsafe extern "C" fn main_sync(file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    let store = store(file);
    match store.data.sync() {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => store.errors.record(e, ffi::SQLITE_IOERR_FSYNC),
    }
}

unsafe extern "C" fn main_file_size(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    *out = store(file).data.logical_size() as ffi::sqlite3_int64;
    ffi::SQLITE_OK
}

unsafe extern "C" fn main_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    match op {
        // Growth is the layer's business: SQLite's size hints and chunk size do not apply.
        ffi::SQLITE_FCNTL_SIZE_HINT | ffi::SQLITE_FCNTL_CHUNK_SIZE => ffi::SQLITE_OK,
        // The anchor is empty: mapping it into memory would show SQLite nothing.
        ffi::SQLITE_FCNTL_MMAP_SIZE => ffi::SQLITE_NOTFOUND,
        ffi::SQLITE_FCNTL_VFSNAME => {
            *arg.cast::<*mut c_char>() = ffi::sqlite3_mprintf(c"%s".as_ptr(), VFS_NAME.as_ptr());
            ffi::SQLITE_OK
        }
        _ => match anchor_methods(file).xFileControl {
            Some(f) => f(anchor(file), op, arg),
            None => ffi::SQLITE_NOTFOUND,
        },
    }
}

static MAIN_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    // Version 2: shared memory, but no xFetch, so SQLite never memory-maps the (empty) anchor.
    iVersion: 2,
    xClose: Some(main_close),
    xRead: Some(main_read),
    xWrite: Some(main_write),
    xTruncate: Some(main_truncate),
    xSync: Some(main_sync),
    xFileSize: Some(main_file_size),
    xLock: Some(main_lock),
    xUnlock: Some(main_unlock),
    xCheckReservedLock: Some(main_check_reserved),
    xFileControl: Some(main_file_control),
    xSectorSize: Some(main_sector_size),
    xDeviceCharacteristics: Some(main_device),
    xShmMap: Some(main_shm_map),
    xShmLock: Some(main_shm_lock),
    xShmBarrier: Some(main_shm_barrier),
    xShmUnmap: Some(main_shm_unmap),
    xFetch: None,
    xUnfetch: None,
};

// ---- the log ---------------------------------------------------------------------------------

unsafe extern "C" fn log_close(file: *mut ffi::sqlite3_file) -> c_int {
    let head = file.cast::<VfsFile>();
    drop(Arc::from_raw((*head).store));
    (*head).base.pMethods = ptr::null();
    ffi::SQLITE_OK
}

unsafe extern "C" fn log_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    let store = store(file);
    let buf = std::slice::from_raw_parts_mut(buf.cast::<u8>(), amount.max(0) as usize);
    match store.log.read(buf, offset.max(0) as u64) {
        Ok(n) if n == buf.len() => ffi::SQLITE_OK,
        Ok(n) => {
            buf[n..].fill(0);
            ffi::SQLITE_IOERR_SHORT_READ
        }
        Err(e) => store.errors.record(e, ffi::SQLITE_IOERR_READ),
    }
}

unsafe extern "C" fn log_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    let store = store(file);
    let buf = std::slice::from_raw_parts(buf.cast::<u8>(), amount.max(0) as usize);
    match store.log_write(buf, offset.max(0) as u64) {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => store.errors.record(e, ffi::SQLITE_IOERR_WRITE),
    }
}

/// The log never shrinks: its space is reused, as a SQL Server log's is, not given back.
unsafe extern "C" fn log_truncate(
    _file: *mut ffi::sqlite3_file,
    _size: ffi::sqlite3_int64,
) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn log_sync(file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    let store = store(file);
    match store.log.sync() {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => store.errors.record(e, ffi::SQLITE_IOERR_FSYNC),
    }
}

unsafe extern "C" fn log_file_size(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    *out = store(file).log.size() as ffi::sqlite3_int64;
    ffi::SQLITE_OK
}

/// SQLite never locks the WAL file itself (its locks live in shared memory).
unsafe extern "C" fn log_lock(_file: *mut ffi::sqlite3_file, _level: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn log_check_reserved(_file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    *out = 0;
    ffi::SQLITE_OK
}

unsafe extern "C" fn log_file_control(
    _file: *mut ffi::sqlite3_file,
    _op: c_int,
    _arg: *mut c_void,
) -> c_int {
    ffi::SQLITE_NOTFOUND
}

unsafe extern "C" fn log_sector_size(_file: *mut ffi::sqlite3_file) -> c_int {
    4096
}

unsafe extern "C" fn log_device(_file: *mut ffi::sqlite3_file) -> c_int {
    ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
}

static LOG_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(log_close),
    xRead: Some(log_read),
    xWrite: Some(log_write),
    xTruncate: Some(log_truncate),
    xSync: Some(log_sync),
    xFileSize: Some(log_file_size),
    xLock: Some(log_lock),
    xUnlock: Some(log_lock),
    xCheckReservedLock: Some(log_check_reserved),
    xFileControl: Some(log_file_control),
    xSectorSize: Some(log_sector_size),
    xDeviceCharacteristics: Some(log_device),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};
