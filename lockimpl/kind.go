package lockimpl

import "github.com/lockbench/lockbench/lockimpl/kind"

// Kind is which of Redisson's locks a Lock is. Package kind defines the
// kinds, their names and properties; lockimpl names them here for its
// callers.
type Kind = kind.Kind

// The kinds (see package kind).
const (
	Reentrant        = kind.Reentrant
	Fair             = kind.Fair
	Read             = kind.Read
	Write            = kind.Write
	Fenced           = kind.Fenced
	Spin             = kind.Spin
	NonReentrant     = kind.NonReentrant
	NonReentrantFair = kind.NonReentrantFair
)
