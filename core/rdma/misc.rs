// SPDX-License-Identifier: GPL-2.0

//! A misc character device with the file operations the RDMA user ABIs need.
//!
//! The kernel's generic `kernel::miscdevice` has no `poll`, no `nodename` and
//! no `mode`; `/dev/infiniband/rdma_cm` needs all three (mode 0666, under
//! `infiniband/`, pollable event channel), so this registration builds its
//! own `file_operations` in the same style.

use super::bindings;
use core::marker::PhantomData;
use kernel::{
    ffi,
    fs::File,
    prelude::*,
    sync::{
        poll::PollTable,
        Arc,
        ArcBorrow, //
    },
    types::{
        ForeignOwnable,
        Opaque, //
    },
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

/// Where and how the device node is created.
#[derive(Copy, Clone)]
pub struct MiscOptions {
    /// The misc device name (`/sys/class/misc/<name>`).
    pub name: &'static CStr,
    /// The node below `/dev` (`infiniband/rdma_cm`).
    pub nodename: &'static CStr,
    /// The node's permission bits.
    pub mode: u16,
}

/// The per-open-file state of a misc device.
#[vtable]
pub trait MiscFile: Send + Sync + Sized + 'static {
    /// The module owning the device (pinned while a file is open).
    type OwnerModule: kernel::ModuleMetadata;

    /// Opens the device; the returned object is the file's private data.
    fn open(file: &File) -> Result<Arc<Self>>;

    /// Releases the file's state (the last reference of the file is gone).
    fn release(this: Arc<Self>, _file: &File) {
        drop(this);
    }

    /// Handles `write(2)`: `buf` is the user's buffer of `len` bytes.
    fn write(
        _this: ArcBorrow<'_, Self>,
        _file: &File,
        _buf: UserSlice,
        _len: usize,
    ) -> Result<usize> {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Handles `poll(2)`: registers waits on `table`, returns the ready mask.
    fn poll(_this: ArcBorrow<'_, Self>, _file: &File, _table: PollTable<'_>) -> u32 {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

/// A registered misc device; dropping it deregisters the device.
///
/// # Invariants
///
/// `misc` is registered with `misc_register()` from construction until drop,
/// and pinned for that whole time.
#[pin_data(PinnedDrop)]
pub struct MiscRegistration<T: MiscFile> {
    #[pin]
    misc: Opaque<bindings::miscdevice>,
    _t: PhantomData<T>,
}

// SAFETY: `misc_deregister` may be called from any thread.
unsafe impl<T: MiscFile> Send for MiscRegistration<T> {}
// SAFETY: `&MiscRegistration` only reads the registered device.
unsafe impl<T: MiscFile> Sync for MiscRegistration<T> {}

impl<T: MiscFile> MiscRegistration<T> {
    /// Registers the device `opts` with `T` as its open-file state.
    pub fn register(opts: MiscOptions) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            misc <- Opaque::try_ffi_init(move |slot: *mut bindings::miscdevice| {
                let mut misc: bindings::miscdevice = pin_init::zeroed();
                misc.minor = bindings::MISC_DYNAMIC_MINOR as ffi::c_int;
                misc.name = opts.name.as_char_ptr();
                misc.nodename = opts.nodename.as_char_ptr();
                misc.mode = opts.mode;
                misc.fops = &FileOpsTable::<T>::FOPS;
                // SAFETY: `slot` is valid for writes and pinned until `drop`,
                // which deregisters the device before the memory goes away.
                // INVARIANT: registered on success.
                unsafe {
                    slot.write(misc);
                    kernel::error::to_result(bindings::misc_register(slot))
                }
            }),
            _t: PhantomData,
        })
    }

    /// The `struct device` of the registered node (for sysfs attributes).
    pub fn this_device(&self) -> *mut kernel::bindings::device {
        // SAFETY: registered (type invariant), so `this_device` is set.
        unsafe { (*self.misc.get()).this_device }
    }
}

#[pinned_drop]
impl<T: MiscFile> PinnedDrop for MiscRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered since construction (type invariant).
        unsafe { bindings::misc_deregister(self.misc.get()) };
    }
}

/// Whether `file` is being written by the task that opened it, with the
/// opener's credentials (`ib_safe_file_access()`); command files that act on
/// behalf of the caller refuse other writers (a setuid program handed the fd).
pub fn safe_file_access(file: &File) -> bool {
    // SAFETY: `file` is a valid file for the duration of the call.
    unsafe { bindings::rrxe_safe_file_access(file.as_ptr().cast()) }
}

struct FileOpsTable<T>(PhantomData<T>);

impl<T: MiscFile> FileOpsTable<T> {
    const FOPS: bindings::file_operations = {
        let mut fops: bindings::file_operations = pin_init::zeroed();
        fops.owner = kernel::module::this_module::<T::OwnerModule>().as_ptr();
        fops.open = Some(Self::open);
        fops.release = Some(Self::release);
        if T::HAS_WRITE {
            fops.write = Some(Self::write);
        }
        if T::HAS_POLL {
            fops.poll = Some(Self::poll);
        }
        fops.llseek = Some(bindings::noop_llseek);
        fops
    };

    /// # Safety
    ///
    /// Called by the VFS for a file being opened on this misc device.
    unsafe extern "C" fn open(
        _inode: *mut bindings::inode,
        raw: *mut bindings::file,
    ) -> ffi::c_int {
        // SAFETY: the file is valid and being opened; no fdget_pos region.
        let file = unsafe { File::from_raw_file(raw.cast()) };
        match T::open(file) {
            Ok(state) => {
                // SAFETY: open may set the private data; from here on every
                // other callback reads it as an `Arc<T>`.
                unsafe { (*raw).private_data = state.into_foreign().cast() };
                // SAFETY: valid file; this device is not seekable.
                unsafe { bindings::stream_open(_inode, raw) }
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the VFS once, for a file whose `open` succeeded.
    unsafe extern "C" fn release(
        _inode: *mut bindings::inode,
        raw: *mut bindings::file,
    ) -> ffi::c_int {
        // SAFETY: `open` stored an `Arc<T>`; release takes it back exactly once.
        let state = unsafe { <Arc<T> as ForeignOwnable>::from_foreign((*raw).private_data.cast()) };
        // SAFETY: the file is valid for the call.
        T::release(state, unsafe { File::from_raw_file(raw.cast()) });
        0
    }

    /// # Safety
    ///
    /// Called by the VFS for an open file of this device.
    unsafe extern "C" fn write(
        raw: *mut bindings::file,
        buf: *const ffi::c_char,
        len: usize,
        _pos: *mut bindings::loff_t,
    ) -> isize {
        // SAFETY: `open` stored an `Arc<T>` that lives until `release`.
        let state = unsafe { <Arc<T> as ForeignOwnable>::borrow((*raw).private_data.cast()) };
        // SAFETY: the file is valid for the call.
        let file = unsafe { File::from_raw_file(raw.cast()) };
        let user = UserSlice::new(UserPtr::from_ptr(buf.cast_mut().cast()), len);
        match T::write(state, file, user, len) {
            Ok(n) => n as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// Called by the VFS for an open file of this device.
    unsafe extern "C" fn poll(
        raw: *mut bindings::file,
        table: *mut bindings::poll_table,
    ) -> bindings::__poll_t {
        // SAFETY: `open` stored an `Arc<T>` that lives until `release`.
        let state = unsafe { <Arc<T> as ForeignOwnable>::borrow((*raw).private_data.cast()) };
        // SAFETY: the file is valid for the call.
        let file = unsafe { File::from_raw_file(raw.cast()) };
        // SAFETY: `table` is the poll table of this call (or NULL).
        let table = unsafe { PollTable::from_raw(table.cast()) };
        T::poll(state, file, table)
    }
}
