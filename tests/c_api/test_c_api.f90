! The C API from Fortran through iso_c_binding (suite c_api): a Fortran array written as a Zarr
! array and read back by region, attributes as JSON text, a child listing, and an error with its id.
! A Fortran array a(n1, n2) is the C-ordered Zarr array of shape [n2, n1]. Exit status 1 on any
! failed check (each prints its name).
module zarrxt_f
  use, intrinsic :: iso_c_binding
  implicit none
  ! zarrxt_status values (include/zarrxt.h)
  integer(c_int), parameter :: zarrxt_ok = 0, zarrxt_err_array = 4
  integer(c_int), parameter :: zarrxt_float64 = 12, zarrxt_node_array = 1
  interface
    function zarrxt_store_open(url, flags, out) bind(c, name='zarrxt_store_open') result(s)
      import :: c_char, c_int, c_ptr
      character(kind=c_char), intent(in) :: url(*)
      integer(c_int), value :: flags ! C unsigned; the flags used here are small
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    subroutine zarrxt_store_close(store) bind(c, name='zarrxt_store_close')
      import :: c_ptr
      type(c_ptr), value :: store
    end subroutine
    function zarrxt_group_create(store, path, format, attrs, flags, out) bind(c, name='zarrxt_group_create') result(s)
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: store
      character(kind=c_char), intent(in) :: path(*), attrs(*)
      integer(c_int), value :: format, flags
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    function zarrxt_array_create_simple(store, path, format, dtype, rank, shape, chunks, flags, out) &
        bind(c, name='zarrxt_array_create_simple') result(s)
      import :: c_char, c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: store
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: format, dtype, flags
      integer(c_size_t), value :: rank
      integer(c_int64_t), intent(in) :: shape(*), chunks(*) ! C uint64_t
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    function zarrxt_node_open(store, path, out) bind(c, name='zarrxt_node_open') result(s)
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: store
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    subroutine zarrxt_node_close(node) bind(c, name='zarrxt_node_close')
      import :: c_ptr
      type(c_ptr), value :: node
    end subroutine
    function zarrxt_array_write(node, offset, extent, in, bytes) bind(c, name='zarrxt_array_write') result(s)
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: node, in
      integer(c_int64_t), intent(in) :: offset(*), extent(*)
      integer(c_size_t), value :: bytes
      integer(c_int) :: s
    end function
    function zarrxt_array_read(node, offset, extent, out, bytes) bind(c, name='zarrxt_array_read') result(s)
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: node, out
      integer(c_int64_t), intent(in) :: offset(*), extent(*)
      integer(c_size_t), value :: bytes
      integer(c_int) :: s
    end function
    function zarrxt_array_shape(node, out, cap) bind(c, name='zarrxt_array_shape') result(s)
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: node
      integer(c_int64_t), intent(out) :: out(*)
      integer(c_size_t), value :: cap
      integer(c_int) :: s
    end function
    function zarrxt_node_set_attributes(node, json) bind(c, name='zarrxt_node_set_attributes') result(s)
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: node
      character(kind=c_char), intent(in) :: json(*)
      integer(c_int) :: s
    end function
    function zarrxt_node_attributes(node, buf, cap, len) bind(c, name='zarrxt_node_attributes') result(s)
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: node
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: s
    end function
    function zarrxt_group_child_count(node, count) bind(c, name='zarrxt_group_child_count') result(s)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: node
      integer(c_size_t), intent(out) :: count
      integer(c_int) :: s
    end function
    function zarrxt_group_child(node, index, buf, cap, len, kind) bind(c, name='zarrxt_group_child') result(s)
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: node
      integer(c_size_t), value :: index, cap
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(out) :: len
      integer(c_int), intent(out) :: kind
      integer(c_int) :: s
    end function
    function zarrxt_last_error_id() bind(c, name='zarrxt_last_error_id') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function
    function c_strlen(p) bind(c, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t) :: n
    end function
  end interface
contains
  ! A NUL-terminated C string as a Fortran string.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function
end module

program test_c_api_fortran
  use zarrxt_f
  implicit none
  character(len=4096) :: dir
  type(c_ptr) :: store, root, arr
  real(c_double), target :: a(5, 3), b(3, 2), one(1)
  integer(c_int64_t) :: shape(2), chunks(2), offset(2), extent(2), got(2)
  character(kind=c_char) :: text(256), name(32)
  character(len=256) :: attrs
  integer(c_size_t) :: length, count
  integer(c_int) :: kind
  integer :: i, j, failures
  failures = 0

  call get_command_argument(1, dir)
  if (len_trim(dir) == 0) then
    print *, 'usage: test_c_api_fortran SCRATCH-DIRECTORY'
    error stop 2
  end if
  call expect(zarrxt_store_open(trim(dir) // '/f.zarr' // c_null_char, 0, store) == zarrxt_ok, 'store_open')
  call expect(zarrxt_group_create(store, c_null_char, 3, '{"from": "fortran"}' // c_null_char, 2, root) == zarrxt_ok, &
              'group_create')

  do j = 1, 3
    do i = 1, 5
      a(i, j) = real(i * 10 + j, c_double) + 0.5d0
    end do
  end do
  shape = [3_c_int64_t, 5_c_int64_t] ! a(5, 3) in C order
  chunks = [2_c_int64_t, 2_c_int64_t]
  call expect(zarrxt_array_create_simple(store, 'field' // c_null_char, 3, zarrxt_float64, 2_c_size_t, shape, chunks, &
                                         0, arr) == zarrxt_ok, 'array_create_simple')
  offset = [0_c_int64_t, 0_c_int64_t]
  call expect(zarrxt_array_write(arr, offset, shape, c_loc(a), int(storage_size(a) / 8 * size(a), c_size_t)) &
              == zarrxt_ok, 'write')
  call expect(zarrxt_array_shape(arr, got, 2_c_size_t) == zarrxt_ok, 'shape')
  call expect(all(got == shape), 'shape values')

  ! Zarr rows 1..2, columns 2..4: Fortran b(3, 2) = a(3:5, 2:3).
  offset = [1_c_int64_t, 2_c_int64_t]
  extent = [2_c_int64_t, 3_c_int64_t]
  b = -1
  call expect(zarrxt_array_read(arr, offset, extent, c_loc(b), int(8 * size(b), c_size_t)) == zarrxt_ok, 'read')
  ! The values went through the store byte for byte: equal, not close.
  call expect(all(abs(b - a(3:5, 2:3)) <= 0), 'read values')

  ! Out of bounds: a typed error with its id.
  offset = [3_c_int64_t, 0_c_int64_t]
  extent = [1_c_int64_t, 1_c_int64_t]
  call expect(zarrxt_array_read(arr, offset, extent, c_loc(one), 8_c_size_t) == zarrxt_err_array, 'out of bounds')
  call expect(from_c(zarrxt_last_error_id()) == 'zarrxt.array.3', 'error id')

  call expect(zarrxt_node_set_attributes(arr, '{"units": "K"}' // c_null_char) == zarrxt_ok, 'set_attributes')
  call zarrxt_node_close(arr)
  call expect(zarrxt_node_open(store, 'field' // c_null_char, arr) == zarrxt_ok, 'node_open')
  call expect(zarrxt_node_attributes(arr, text, 256_c_size_t, length) == zarrxt_ok, 'attributes')
  attrs = ''
  do i = 1, int(length)
    attrs(i:i) = text(i)
  end do
  call expect(index(attrs, '"units"') > 0 .and. index(attrs, '"K"') > 0, 'attributes text')

  call expect(zarrxt_group_child_count(root, count) == zarrxt_ok .and. count == 1, 'child_count')
  call expect(zarrxt_group_child(root, 0_c_size_t, name, 32_c_size_t, length, kind) == zarrxt_ok, 'child')
  call expect(length == 5 .and. kind == zarrxt_node_array, 'child name and kind')
  call expect(name(1) == 'f' .and. name(5) == 'd' .and. name(6) == c_null_char, 'child name text')

  call zarrxt_node_close(arr)
  call zarrxt_node_close(root)
  call zarrxt_store_close(store)
  if (failures /= 0) then
    print *, failures, ' checks failed'
    error stop 1
  end if
  print *, 'all checks passed'

contains
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print *, 'FAILED: ', what, ' (last error: ', from_c(zarrxt_last_error_id()), ')'
      failures = failures + 1
    end if
  end subroutine
end program
