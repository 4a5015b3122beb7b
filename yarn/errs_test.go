package yarn

import "errors"

func isErr(err, target error) bool { return errors.Is(err, target) }

func asErr(err error, target any) bool { return errors.As(err, target) }
