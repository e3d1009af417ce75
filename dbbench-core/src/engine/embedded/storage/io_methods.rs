//! The I/O methods of the files the `dbbench` VFS serves itself: the main database file (data
//! files for its content, the anchor for locks and shared memory) and the WAL (the log file).
//!
//! Every method is a thin translation: it finds the database's [`Store`] through the pointer kept
//! in the file object, calls it, and turns a [`super::error::StorageError`] into a SQLite result
//! code after recording it for the backend's message.

use super::store::Store;
use super::vfs::VFS_NAME;
use rusqlite::ffi;
use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::Arc;

/// The head of every file object the VFS serves itself; the anchor follows at [`HEADER`].
#[repr(C)]
pub(super) struct VfsFile {
    pub(super) base: ffi::sqlite3_file,
    pub(super) store: *const Store,
}

pub(super) const HEADER: usize = std::mem::size_of::<VfsFile>().next_multiple_of(16);

// ---- the main database file ------------------------------------------------------------------

pub(super) unsafe fn anchor(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
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

pub(super) static MAIN_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
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

pub(super) static LOG_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
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
