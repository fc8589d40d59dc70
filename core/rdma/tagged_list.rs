// SPDX-License-Identifier: GPL-2.0

//! An intrusive list that can take out any of its items, safely.
//!
//! [`kernel::list::List`] links items through a [`ListLinks`] field, as C's
//! `list_head`: adding and removing allocate nothing and cost a few pointer
//! writes. But removing an item by reference ([`List::remove`]) is `unsafe`:
//! the caller must know that the item is not in another list of the same
//! kind, which a list cannot check from the links alone. A [`TaggedList`]
//! can: each list has a tag no other list has, and each item a [`ListTag`]
//! field holding the tag of the list it is in (0 in none), written only by
//! that list's own methods. A list that finds its tag in an item holds it.
//!
//! It is what C's `list_del(&ctx->list)` on a file's `ctx_list` is, for
//! items that may move between lists (a context migrating to another file)
//! while a command on the old list still holds a reference to them.
//!
//! [`ListLinks`]: kernel::list::ListLinks

use core::sync::atomic::{
    AtomicU64,
    Ordering, //
};
use kernel::list::{
    List,
    ListArc,
    ListItem, //
};

/// The tag of the next list made; 0 is never a list's (it marks items in
/// none). 64 bits do not wrap: a new list every nanosecond for 500 years.
static NEXT_TAG: AtomicU64 = AtomicU64::new(1);

/// The field of an item saying which [`TaggedList`] (of lists of `ID`) it is
/// in.
///
/// # Invariants
///
/// The value is 0 or the tag of a [`TaggedList`]; it is written only by a
/// [`TaggedList`]'s methods, under that list's `&mut self`: set to its tag
/// as it takes the item in, back to 0 as it gives the item out.
pub struct ListTag<const ID: u64 = 0>(AtomicU64);

impl<const ID: u64> ListTag<ID> {
    /// The tag of an item in no list.
    pub const fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    fn get(&self) -> u64 {
        // Relaxed: the value that matters, a list's own tag, is only written
        // under that list's `&mut self`, which orders it for its next user.
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self, tag: u64) {
        self.0.store(tag, Ordering::Relaxed);
    }
}

impl<const ID: u64> Default for ListTag<ID> {
    fn default() -> Self {
        Self::new()
    }
}

/// Items that carry a [`ListTag`]: implement with [`impl_has_list_tag!`].
///
/// # Safety
///
/// `list_tag` returns the same field of `self` every time, a field of its
/// own (not one reached through a pointer, which other items could share).
pub unsafe trait HasListTag<const ID: u64 = 0> {
    /// The item's tag.
    fn list_tag(&self) -> &ListTag<ID>;
}

/// Implements [`HasListTag`] with a field of the type:
///
/// ```ignore
/// impl_has_list_tag! { impl HasListTag<0> for Ctx { self.list_tag } }
/// ```
#[macro_export]
macro_rules! impl_has_list_tag {
    (impl HasListTag<$num:tt> for $self:ty { self.$field:ident }) => {
        // SAFETY: `list_tag` returns the field `$field` of `self` itself:
        // a direct field (a path through a pointer would not name a field
        // here), the same on every call.
        unsafe impl $crate::rdma::tagged_list::HasListTag<$num> for $self {
            fn list_tag(&self) -> &$crate::rdma::tagged_list::ListTag<$num> {
                &self.$field
            }
        }
    };
}

/// A [`List`] whose items record that they are in it (see the module
/// documentation): [`TaggedList::remove`] is safe.
///
/// # Invariants
///
/// `tag` is nonzero and no other list's. Every item of `list` has `tag` in
/// its [`ListTag`], and an item whose [`ListTag`] holds `tag` is in `list`.
pub struct TaggedList<T: ?Sized + ListItem<ID> + HasListTag<ID>, const ID: u64 = 0> {
    list: List<T, ID>,
    tag: u64,
}

impl<T: ?Sized + ListItem<ID> + HasListTag<ID>, const ID: u64> TaggedList<T, ID> {
    /// An empty list with a tag of its own.
    pub fn new() -> Self {
        Self {
            list: List::new(),
            tag: NEXT_TAG.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Whether the list has no item.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether `item` is in this list.
    pub fn contains(&self, item: &T) -> bool {
        item.list_tag().get() == self.tag
    }

    /// Adds `item` at the back.
    pub fn push_back(&mut self, item: ListArc<T, ID>) {
        // INVARIANT: a `ListArc` is the only one of its item for lists of
        // `ID`, so the item is in no such list (its tag is not this list's
        // by the invariant, nor any live list's); from here it is in this one.
        item.list_tag().set(self.tag);
        self.list.push_back(item);
    }

    /// Takes the first item out.
    pub fn pop_front(&mut self) -> Option<ListArc<T, ID>> {
        let item = self.list.pop_front()?;
        // INVARIANT: out of the list, so no longer tagged as in it.
        item.list_tag().set(0);
        Some(item)
    }

    /// Takes `item` out, if it is in this list.
    pub fn remove(&mut self, item: &T) -> Option<ListArc<T, ID>> {
        if !self.contains(item) {
            return None;
        }
        // SAFETY: the item holds this list's tag, so it is in this list
        // (type invariant), not in another: only this list's methods change
        // the tag from this value, and `&mut self` excludes them meanwhile.
        let taken = unsafe { self.list.remove(item) };
        // INVARIANT: out of the list, so no longer tagged as in it.
        item.list_tag().set(0);
        taken
    }
}

impl<T: ?Sized + ListItem<ID> + HasListTag<ID>, const ID: u64> Default for TaggedList<T, ID> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: ?Sized + ListItem<ID> + HasListTag<ID>, const ID: u64> Drop for TaggedList<T, ID> {
    fn drop(&mut self) {
        // Untag the items on their way out (the inner list drops them).
        while let Some(item) = self.pop_front() {
            drop(item);
        }
    }
}
