package persistence

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sync/atomic"
)

// The check reads the storage file the way file_storage's storage library
// (bbolt) lays it out, with plain reads instead of the library's memory
// map. The library maps the file into memory, and at open it walks every
// page in a goroutine of its own: a page past the end of a file cut short
// faults there, and a page it does not expect makes it panic there, and
// either ends the process, whatever the goroutine that opened the file
// does (runtime/debug.SetPanicOnFault covers only the goroutine that sets
// it). So before the library sees the file, the check follows the same
// pages: every one must lie inside the file, say that it is the page it was
// looked up as, be of the type expected there, hold its elements inside
// itself, keep its keys in order and be reached once. A file that passes
// opens without a fault, and without the library's own check finding
// anything (it would panic on that too, while its goroutine still reads);
// one that does not is damaged.

// Layout of a bbolt file (format version 2), in the byte order of the
// machine that wrote it.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	elementSize      = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	bucketHeaderSize = 16 // root pgid u64, sequence u64
	metaSize         = 64 // magic, version, page size, flags, root bucket, freelist, pgid, txid, checksum
	branchPage       = 0x01
	leafPage         = 0x02
	freelistPage     = 0x10
	bucketLeafFlag   = 0x01
	noFreelist       = ^uint64(0)
	// minPageSize and maxPageSize bound the page sizes the library reads.
	minPageSize = 1 << 10
	maxPageSize = 1 << 24
)

var order = binary.NativeEndian

// errDamaged marks what the check found wrong with the file.
var errDamaged = errors.New("damaged")

func damagedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errDamaged}, args...)...)
}

// boltFile is a storage file being checked.
type boltFile struct {
	r        io.ReaderAt
	size     int64
	pageSize int64
	high     uint64 // the first page id never allocated (the meta's pgid)
	seen     map[uint64]bool
	pages    *atomic.Int64 // pages read so far, for the progress log
	ctx      context.Context
}

// meta is what the check needs of a meta page.
type meta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	high     uint64
	txid     uint64
}

// checkBolt checks the bbolt file read through r, of size bytes. It returns
// an error wrapping errDamaged for damage, ctx's error when ctx ends first,
// and another error when reading fails.
func checkBolt(ctx context.Context, r io.ReaderAt, size int64, pages *atomic.Int64) error {
	f := &boltFile{r: r, size: size, seen: map[uint64]bool{}, pages: pages, ctx: ctx}
	m, err := f.meta()
	if err != nil {
		return err
	}
	f.pageSize, f.high = int64(m.pageSize), m.high
	if m.freelist != noFreelist {
		p, err := f.page(m.freelist)
		if err != nil {
			return err
		}
		if p.flags != freelistPage {
			return damagedf("page %d: the freelist is a page of type %#x", m.freelist, p.flags)
		}
	}
	return f.bucket(m.root)
}

// meta reads the two meta pages and returns the one the library uses: the
// valid one with the higher transaction id.
func (f *boltFile) meta() (meta, error) {
	if f.size < 2*minPageSize {
		return meta{}, damagedf("the file has %d bytes, too few for a storage file", f.size)
	}
	m0, err0 := f.readMeta(0)
	if err0 != nil && !errors.Is(err0, errDamaged) {
		return meta{}, err0
	}
	// The second meta page is one page in: take the page size from the
	// first, or, when the first is damaged, try each size the library
	// would.
	var m1 meta
	err1 := damagedf("no second meta page")
	if err0 == nil {
		m1, err1 = f.readMeta(int64(m0.pageSize))
	} else {
		for ps := int64(minPageSize); ps <= maxPageSize && ps < f.size-minPageSize; ps <<= 1 {
			if m1, err1 = f.readMeta(ps); err1 == nil || !errors.Is(err1, errDamaged) {
				break
			}
		}
	}
	if err1 != nil && !errors.Is(err1, errDamaged) {
		return meta{}, err1
	}
	switch {
	case err0 != nil && err1 != nil:
		return meta{}, damagedf("both meta pages are invalid (%v; %v)", err0, err1)
	case err0 != nil:
		m0 = m1
	case err1 == nil && m1.txid > m0.txid:
		m0 = m1
	}
	if int64(m0.pageSize)*2 > f.size {
		return meta{}, damagedf("the file has %d bytes, fewer than two pages of %d", f.size, m0.pageSize)
	}
	return m0, nil
}

// readMeta reads and validates the meta page at off.
func (f *boltFile) readMeta(off int64) (meta, error) {
	b := make([]byte, pageHeaderSize+metaSize)
	if err := f.read(b, off); err != nil {
		return meta{}, err
	}
	b = b[pageHeaderSize:]
	if order.Uint32(b[0:]) != boltMagic {
		return meta{}, damagedf("meta page at %d: not a storage file (no magic number)", off)
	}
	if v := order.Uint32(b[4:]); v != boltVersion {
		return meta{}, damagedf("meta page at %d: format version %d, not %d", off, v, boltVersion)
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:metaSize-8])
	if h.Sum64() != order.Uint64(b[metaSize-8:]) {
		return meta{}, damagedf("meta page at %d: checksum mismatch", off)
	}
	m := meta{
		pageSize: order.Uint32(b[8:]),
		root:     order.Uint64(b[16:]),
		freelist: order.Uint64(b[32:]),
		high:     order.Uint64(b[40:]),
		txid:     order.Uint64(b[48:]),
	}
	if m.pageSize < minPageSize || m.pageSize > maxPageSize || m.pageSize&(m.pageSize-1) != 0 {
		return meta{}, damagedf("meta page at %d: page size %d", off, m.pageSize)
	}
	return m, nil
}

// read fills b from off; a file that ends before is damage (cut short).
func (f *boltFile) read(b []byte, off int64) error {
	if off < 0 || off+int64(len(b)) > f.size {
		return damagedf("the file ends at %d bytes, before byte %d (cut short)", f.size, off+int64(len(b)))
	}
	if _, err := f.r.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			return damagedf("the file ends before byte %d (cut short)", off+int64(len(b)))
		}
		return fmt.Errorf("reading the storage file: %w", err)
	}
	return nil
}

// page is one page as read: its header and its bytes, overflow included.
type page struct {
	id       uint64
	flags    uint16
	count    int
	overflow uint64
	data     []byte // the whole page, header first
}

// page reads page id, checking that it lies inside the file and says that
// it is page id.
func (f *boltFile) page(id uint64) (page, error) {
	if err := f.ctx.Err(); err != nil {
		return page{}, err
	}
	if id < 2 || id > f.high || id > uint64(f.size/f.pageSize) {
		return page{}, damagedf("page %d is out of bounds (the file has %d pages, %d allocated)", id, f.size/f.pageSize, f.high)
	}
	head := make([]byte, pageHeaderSize)
	if err := f.read(head, int64(id)*f.pageSize); err != nil {
		return page{}, err
	}
	p := page{id: order.Uint64(head), flags: order.Uint16(head[8:]), count: int(order.Uint16(head[10:])), overflow: uint64(order.Uint32(head[12:]))}
	if p.id != id {
		return page{}, damagedf("page %d identifies itself as page %d", id, p.id)
	}
	span := (1 + p.overflow) * uint64(f.pageSize)
	if span > uint64(f.size) {
		return page{}, damagedf("page %d claims %d overflow pages, more than the file holds", id, p.overflow)
	}
	p.data = make([]byte, span)
	if err := f.read(p.data, int64(id)*f.pageSize); err != nil {
		return page{}, err
	}
	f.pages.Add(1)
	return p, nil
}

// bucket checks the tree of the bucket whose root page is root.
func (f *boltFile) bucket(root uint64) error {
	p, err := f.reach(root)
	if err != nil {
		return err
	}
	_, err = f.tree(p, nil, nil)
	return err
}

// reach reads page id the first time the walk reaches it; reaching it
// again (or a page in its overflow) is damage: two parents, or a loop.
func (f *boltFile) reach(id uint64) (page, error) {
	if f.seen[id] {
		return page{}, damagedf("page %d is reached twice", id)
	}
	p, err := f.page(id)
	if err != nil {
		return page{}, err
	}
	for i := uint64(0); i <= p.overflow; i++ {
		if f.seen[id+i] {
			return page{}, damagedf("page %d is reached twice", id+i)
		}
		f.seen[id+i] = true
	}
	return p, nil
}

// tree checks a branch or leaf page and what hangs from it. Its keys must
// be in order, at least low (when set) and below high (when set), as the
// library requires; it returns the greatest key of the tree.
func (f *boltFile) tree(p page, low, high []byte) ([]byte, error) {
	switch p.flags {
	case branchPage:
		if p.count == 0 {
			return nil, damagedf("page %d: a branch page without elements", p.id)
		}
		if err := elementsFit(p.data, p.count, p.id); err != nil {
			return nil, err
		}
		keys := make([][]byte, p.count)
		for i := range p.count {
			at := pageHeaderSize + i*elementSize
			e := p.data[at:]
			pos, ksize := int(order.Uint32(e[0:])), int(order.Uint32(e[4:]))
			if err := keyFits(p.data, at, pos, ksize, 0, p.id); err != nil {
				return nil, err
			}
			keys[i] = p.data[at+pos : at+pos+ksize]
		}
		var greatest []byte
		prev := low
		for i, key := range keys {
			if err := keyInOrder(p.id, i, key, prev, high); err != nil {
				return nil, err
			}
			child, err := f.reach(order.Uint64(p.data[pageHeaderSize+i*elementSize+8:]))
			if err != nil {
				return nil, err
			}
			next := high
			if i+1 < len(keys) {
				next = keys[i+1]
			}
			if greatest, err = f.tree(child, key, next); err != nil {
				return nil, err
			}
			prev = greatest
		}
		return greatest, nil
	case leafPage:
		return f.leaf(p.data, p.count, p.id, low, high, true)
	}
	return nil, damagedf("page %d: a page of type %#x where a branch or leaf page belongs", p.id, p.flags)
}

// leaf checks the elements of a leaf page held in data (a page read from
// the file, or a bucket stored inline in its parent's value) and the
// buckets nested in it. The library checks the order of keys on pages,
// not inline (ordered says which).
func (f *boltFile) leaf(data []byte, count int, id uint64, low, high []byte, ordered bool) ([]byte, error) {
	if err := elementsFit(data, count, id); err != nil {
		return nil, err
	}
	prev := low
	for i := range count {
		at := pageHeaderSize + i*elementSize
		e := data[at:]
		flags, pos, ksize, vsize := order.Uint32(e[0:]), int(order.Uint32(e[4:])), int(order.Uint32(e[8:])), int(order.Uint32(e[12:]))
		if err := keyFits(data, at, pos, ksize, vsize, id); err != nil {
			return nil, err
		}
		key := data[at+pos : at+pos+ksize]
		if ordered {
			if err := keyInOrder(id, i, key, prev, high); err != nil {
				return nil, err
			}
		}
		prev = key
		if flags&bucketLeafFlag == 0 {
			continue
		}
		value := data[at+pos+ksize : at+pos+ksize+vsize]
		if len(value) < bucketHeaderSize {
			return nil, damagedf("page %d: a nested bucket of %d bytes", id, len(value))
		}
		if root := order.Uint64(value); root != 0 {
			if err := f.bucket(root); err != nil {
				return nil, err
			}
			continue
		}
		inline := value[bucketHeaderSize:]
		if len(inline) < pageHeaderSize {
			return nil, damagedf("page %d: an inline bucket of %d bytes", id, len(inline))
		}
		if fl := order.Uint16(inline[8:]); fl != leafPage {
			return nil, damagedf("page %d: an inline bucket of type %#x", id, fl)
		}
		if _, err := f.leaf(inline, int(order.Uint16(inline[10:])), id, nil, nil, false); err != nil {
			return nil, err
		}
	}
	if count == 0 {
		return nil, nil
	}
	return prev, nil
}

// keyInOrder checks the index-th key of page id: the first at least prev
// (the parent's key, when set), the others above the key before them, all
// below high (when set).
func keyInOrder(id uint64, index int, key, prev, high []byte) error {
	switch {
	case index == 0 && prev != nil && bytes.Compare(prev, key) > 0:
		return damagedf("page %d: its first key is below its parent's", id)
	case index > 0 && bytes.Compare(prev, key) >= 0:
		return damagedf("page %d: key %d is out of order", id, index)
	case high != nil && bytes.Compare(key, high) >= 0:
		return damagedf("page %d: key %d is not below the next key of its parent", id, index)
	}
	return nil
}

// elementsFit checks that count elements fit in data after the header.
func elementsFit(data []byte, count int, id uint64) error {
	if pageHeaderSize+count*elementSize > len(data) {
		return damagedf("page %d: %d elements do not fit in its %d bytes", id, count, len(data))
	}
	return nil
}

// keyFits checks that the key and value of the element at offset at, which
// start pos bytes after it, lie inside data.
func keyFits(data []byte, at, pos, ksize, vsize int, id uint64) error {
	if end := at + pos + ksize + vsize; pos < 0 || ksize < 0 || vsize < 0 || end > len(data) || end < at {
		return damagedf("page %d: an element points past the page", id)
	}
	return nil
}
