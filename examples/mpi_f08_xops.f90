! mpi_f08_xops: XRDMA's X-operations from Fortran (mpi_f08 + mpix_xrdma).
!
! Every rank exposes N int64 words and one counter word in an
! MPI_Win_allocate window (word i of rank r starts as 1000*r + i) and works
! on its right neighbour t = r+1 (mod size) with the functions of
! mpi_f08_ifunc.c, loaded from the image beside this program:
!   MPIX_Xput    add_i64     adds (r+1)*i to word i at t
!   MPIX_Xinvoke bump_last   adds 7*(r+1) to t's counter (and MPIX_Rxinvoke 1)
!   MPIX_Xget    scaled_sum  t's words summed and scaled, replied here
!   MPIX_Rxget   the same through a request (image loaded from memory)
!   MPIX_Xget    MPIX_IFUNC_NULL: a plain get of t's counter
! then checks its own window (what its left neighbour did) and the errors:
! a function that fails (MPIX_ERR_IFUNC_RETURN through MPI_Wait), a strided
! buffer (MPI_ERR_BUFFER), an image that does not exist. Every answer is
! compared with the value computed here; the last line says how many held.
program mpi_f08_xops
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_int64_t, c_int32_t, c_int8_t
  use mpi_f08
  use mpix_xrdma
  implicit none
  ! (N + 1 words a multiple of 16 bytes: MPICH 4.0.2's MPI_Get from a lower
  ! rank reads the word before the one asked for in a window of another size.)
  integer, parameter :: N = 7
  integer(MPI_ADDRESS_KIND), parameter :: zero = 0
  integer :: rank, nranks, t, left, i, ierr, cls, good, total, u, isize
  integer(c_int64_t), pointer :: w(:)
  integer(c_int64_t) :: d(N), s, expect, scale, by, last
  integer(c_int32_t) :: code
  integer(c_int8_t), allocatable :: image(:)
  type(c_ptr) :: base
  type(MPI_Win) :: win
  type(MPI_Request) :: req
  type(MPIX_Ifunc) :: add, ssum, ssum_mem, bump, fail
  character(len=4096) :: exe, path
  character(len=MPI_MAX_ERROR_STRING) :: msg
  integer :: msglen

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  t = mod(rank + 1, nranks)
  left = mod(rank - 1 + nranks, nranks)
  good = 0
  total = 0

  call MPI_Win_allocate(int((N + 1) * 8, MPI_ADDRESS_KIND), 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
  call c_f_pointer(base, w, [N + 1])
  do i = 1, N
    w(i) = 1000 * rank + i
  end do
  w(N + 1) = 0

  ! The image lies beside this program; only the origins read it.
  call get_command_argument(0, exe)
  path = exe(1:index(exe, '/', back=.true.)) // 'mpi_f08_ifunc.xfn'
  call MPIX_Ifunc_load(path, 'add_i64', add)
  call MPIX_Ifunc_load(path, 'scaled_sum', ssum)
  call MPIX_Ifunc_load(path, 'bump_last', bump)
  call MPIX_Ifunc_load(path, 'fail_with', fail)
  open(newunit=u, file=path, access='stream', form='unformatted', status='old')
  inquire(unit=u, size=isize)
  allocate(image(isize))
  read(u) image
  close(u)
  call MPIX_Ifunc_load_mem(image, 'scaled_sum', ssum_mem)
  deallocate(image)          ! the call copied it
  call MPI_Barrier(MPI_COMM_WORLD)

  call MPI_Win_lock_all(0, win)
  do i = 1, N
    d(i) = (rank + 1) * i
  end do
  call MPIX_Xput(d, N, MPI_INTEGER8, t, zero, N, MPI_INTEGER8, add, win=win)
  by = 7 * (rank + 1)
  call MPIX_Xinvoke(bump, by, t, win)
  call MPI_Win_flush(t, win)  ! remote completion: both functions ran at t
  by = 1
  call MPIX_Rxinvoke(bump, by, t, win, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_Barrier(MPI_COMM_WORLD)

  expect = 0
  do i = 1, N
    expect = expect + 1000 * t + i + (rank + 1) * i
  end do
  scale = 2
  call MPIX_Xget(s, 1, MPI_INTEGER8, t, zero, N, MPI_INTEGER8, ssum, scale, win)
  call MPI_Win_flush(t, win)
  call check(s == 2 * expect, 'Xget scaled_sum')
  scale = 3
  call MPIX_Rxget(s, 1, MPI_INTEGER8, t, zero, N, MPI_INTEGER8, ssum_mem, scale, win, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(s == 3 * expect, 'Rxget scaled_sum (image from memory)')
  call MPIX_Xget(last, 1, MPI_INTEGER8, t, int(N, MPI_ADDRESS_KIND), 1, MPI_INTEGER8, MPIX_IFUNC_NULL, win=win)
  call MPI_Win_flush(t, win)
  call check(last == 7 * (rank + 1) + 1, 'Xget without code (MPI_Get)')

  ! What the left neighbour did here.
  call MPI_Win_sync(win)
  do i = 1, N
    call check(w(i) == 1000 * rank + i + (left + 1) * i, 'window word after Xput add_i64')
  end do
  call check(w(N + 1) == 7 * (left + 1) + 1, 'counter after Xinvoke and Rxinvoke')

  ! Errors come back as MPI errors with XRDMA's classes (MPI_Wait reports
  ! through MPI_COMM_WORLD's handler, the X-operations through the window's).
  call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  code = 5
  call MPIX_Rxinvoke(fail, code, t, win, req, ierr)
  call check(ierr == MPI_SUCCESS, 'Rxinvoke fail_with issued')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPIX_ERR_IFUNC_RETURN, 'failing function: MPIX_ERR_IFUNC_RETURN')
  if (rank == 0 .and. ierr /= MPI_SUCCESS) then
    call MPI_Error_string(ierr, msg, msglen)
    print '(a)', '# the failing function, as MPI reports it: ' // msg(1:msglen)
  end if
  call MPIX_Xput(d(1:N:2), N / 2, MPI_INTEGER8, t, zero, N / 2, MPI_INTEGER8, add, win=win, ierror=ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_BUFFER, 'strided buffer refused (MPI_ERR_BUFFER)')
  call MPI_Win_unlock_all(win)
  call MPIX_Ifunc_load(trim(path) // '.missing', 'add_i64', add, ierr)
  call check(ierr /= MPI_SUCCESS .and. add == MPIX_IFUNC_NULL, 'missing image refused')

  call MPI_Allreduce(MPI_IN_PLACE, good, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (good == total) then
      print '(a,i0,a,i0,a,i0,a)', 'answers checked: ', good, '/', total, ' ok (', nranks, ' ranks)'
    else
      print '(a,i0,a,i0,a)', 'answers checked: ', good, '/', total, ' FAILED'
    end if
  end if

  call MPIX_Ifunc_free(ssum)
  call MPIX_Ifunc_free(ssum_mem)
  call MPIX_Ifunc_free(bump)
  call MPIX_Ifunc_free(fail)
  call MPI_Win_free(win)
  call MPI_Finalize()
  if (good /= total) error stop

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    total = total + 1
    if (ok) then
      good = good + 1
    else
      print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', what
    end if
  end subroutine

end program mpi_f08_xops
