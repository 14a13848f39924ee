// Package journal keeps an append-only file of records that outlives the
// process writing it: a record is appended whole, in one write, before
// anything that depends on it is shown to anyone. Reading it back stops
// at the last whole record: a tail torn by a death in mid-write, or by a
// full disk, is cut off.
//
// A record on disk is its length and the CRC-32C of its payload, four
// bytes each, little endian, then the payload. A journal grows until it
// is rewritten whole (Rewrite): the writer's snapshot, a file made aside
// and renamed over the old one, so that a death at any point leaves one
// or the other.
package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
)

// HeaderSize is the bytes before a record's payload: a payload appended
// when the journal's Size is n starts at n+HeaderSize.
const HeaderSize = 8

// MaxRecord is the largest payload of a record. A length beyond it, read
// back, is a torn or foreign header, not a record.
const MaxRecord = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Journal is an open journal file. Append, Rewrite and Close are for one
// goroutine; Sync and Synced may be called from another.
type Journal struct {
	path string
	// mu guards f against a Rewrite while another goroutine syncs.
	mu sync.Mutex
	f  *os.File
	// size is the bytes of whole records; a failed append is cut back
	// to it. appended counts every byte ever appended (across rewrites),
	// synced those known to be on the disk: Sync compares them.
	size     int64
	appended atomic.Uint64
	synced   atomic.Uint64
	// broken is a failed append whose bytes could not be cut off: the
	// file's tail is unknown until the next Rewrite.
	broken error
	buf    []byte // the record being framed
}

// Tail says how reading a journal ended.
type Tail struct {
	Records int   // whole records read
	Cut     int64 // bytes after the last whole record, cut off
}

// ErrBroken is Append's answer while the file's tail is unknown, after an
// append failed and could not be undone: only a Rewrite repairs it.
var ErrBroken = errors.New("journal: the file's tail is unknown after a failed append; it must be rewritten")

// Open reads the journal at path, calling each with every whole record's
// payload in order, cuts off what follows the last whole one, and opens
// the file for appending. A missing file is an empty journal. each may
// not keep the payload: it is reused.
func Open(path string, each func(payload []byte) error) (*Journal, Tail, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, Tail{}, fmt.Errorf("journal: %w", err)
	}
	size, tail, err := read(f, each)
	if err == nil && tail.Cut > 0 {
		err = f.Truncate(size)
	}
	if err == nil {
		_, err = f.Seek(size, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, tail, fmt.Errorf("journal %s: %w", path, err)
	}
	j := &Journal{path: path, f: f, size: size}
	j.appended.Store(uint64(size))
	j.synced.Store(uint64(size))
	return j, tail, nil
}

// read calls each for every whole record of f from its start, and returns
// the size of the whole records. Only each's error is an error: anything
// the file holds after the last whole record is a torn tail.
func read(f *os.File, each func([]byte) error) (int64, Tail, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, Tail{}, err
	}
	r := io.NewSectionReader(f, 0, st.Size())
	var (
		head [HeaderSize]byte
		buf  []byte
		off  int64
		t    Tail
	)
	for {
		if _, err := r.ReadAt(head[:], off); err != nil {
			break
		}
		n := binary.LittleEndian.Uint32(head[:4])
		if n > MaxRecord || off+HeaderSize+int64(n) > st.Size() {
			break
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := r.ReadAt(buf, off+HeaderSize); err != nil {
			break
		}
		if crc32.Checksum(buf, castagnoli) != binary.LittleEndian.Uint32(head[4:]) {
			break
		}
		if err := each(buf); err != nil {
			return off, t, err
		}
		off += HeaderSize + int64(n)
		t.Records++
	}
	t.Cut = st.Size() - off
	return off, t, nil
}

// frame is a record as it lies on disk, in j's buffer: valid until the
// next frame.
func (j *Journal) frame(payload []byte) ([]byte, error) {
	if len(payload) > MaxRecord {
		return nil, fmt.Errorf("journal: a record of %d bytes: at most %d", len(payload), MaxRecord)
	}
	b := slices.Grow(j.buf[:0], HeaderSize+len(payload))[:HeaderSize]
	binary.LittleEndian.PutUint32(b[:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(payload, castagnoli))
	j.buf = append(b, payload...)
	return j.buf, nil
}

// Append adds one record, in one write. The record is in the file, and
// survives the process, once Append returns; on the disk, once Sync has
// run after it. On an error nothing of the record is left, unless the
// error is ErrBroken.
func (j *Journal) Append(payload []byte) error {
	if j.broken != nil {
		return fmt.Errorf("%w (%v)", ErrBroken, j.broken)
	}
	b, err := j.frame(payload)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(b); err != nil {
		// A short write (a full disk) leaves part of the record: cut it
		// off, or the next record would follow garbage.
		if terr := j.cutBack(); terr != nil {
			j.broken = terr
			return fmt.Errorf("journal %s: append: %w; cutting it back: %v", j.path, err, terr)
		}
		return fmt.Errorf("journal %s: append: %w", j.path, err)
	}
	j.size += int64(len(b))
	j.appended.Add(uint64(len(b)))
	return nil
}

func (j *Journal) cutBack() error {
	if err := j.f.Truncate(j.size); err != nil {
		return err
	}
	_, err := j.f.Seek(j.size, io.SeekStart)
	return err
}

// Appended is a mark of everything appended so far: Sync(mark) makes it
// durable.
func (j *Journal) Appended() uint64 { return j.appended.Load() }

// Sync makes every record appended up to mark durable on the disk, if it
// is not yet: one fdatasync covers all the records before it.
func (j *Journal) Sync(mark uint64) error {
	if j.synced.Load() >= mark {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	upTo := j.appended.Load()
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: sync: %w", j.path, err)
	}
	j.synced.Store(upTo)
	return nil
}

// Size is the bytes of the file's whole records.
func (j *Journal) Size() int64 { return j.size }

// ReadAt reads the file's bytes at off, for the goroutine that appends: a
// record written before can be copied rather than made again. Within a
// Rewrite's write, it reads the file being replaced.
func (j *Journal) ReadAt(b []byte, off int64) (int, error) { return j.f.ReadAt(b, off) }

// Rewrite replaces the journal with the records write adds: a file
// written aside and renamed over the old one, so that a death of the
// process at any point leaves one or the other (the kernel keeps what was
// written). With durable, the new file and the rename are also synced
// first, for a crash of the host. It repairs a broken journal. On an
// error the old file stays as it was.
func (j *Journal) Rewrite(durable bool, write func(add func(payload []byte) error) error) error {
	tmp := j.path + ".new"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("journal: rewrite: %w", err)
	}
	var size int64
	err = write(func(payload []byte) error {
		b, err := j.frame(payload)
		if err == nil {
			_, err = f.Write(b)
			size += int64(len(b))
		}
		return err
	})
	if err == nil && durable {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err == nil && durable {
		err = syncDir(filepath.Dir(j.path))
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal %s: rewrite: %w", j.path, err)
	}
	j.mu.Lock()
	old := j.f
	j.f, j.size, j.broken = f, size, nil
	if mark := j.appended.Add(uint64(size)); durable {
		j.synced.Store(mark)
	}
	j.mu.Unlock()
	return old.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Close closes the file; what was appended stays.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Close()
}
