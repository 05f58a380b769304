! What the mpix_xrdma module refuses itself, before the C API, says what is
! wrong (tests/fortran/test_messages.sh runs it on one rank; argument 1:
! examples/mpi_f08_ifunc.xfn): a strided args, origin buffer or image "must
! be contiguous" (MPI_ERR_BUFFER), and args larger than the C API's int
! args_size say the limit (MPI_ERR_ARG). Prints each check; exit status 0
! when all hold.
program f08_messages
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int8_t, c_int64_t
  use mpi_f08
  use mpix_xrdma
  implicit none
  integer(MPI_ADDRESS_KIND), parameter :: zero = 0
  type(MPI_Win) :: win
  type(c_ptr) :: base
  type(MPIX_Ifunc) :: f, g
  integer(c_int64_t) :: d(8)
  integer(c_int8_t) :: img(64)
  integer(c_int8_t), allocatable :: big(:)
  integer :: ierr, st, bad
  character(len=4096) :: path

  call MPI_Init()
  call MPI_Win_allocate(64_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
  call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call get_command_argument(1, path)
  call MPIX_Ifunc_load(path, 'bump_last', f)
  bad = 0
  d = 1
  img = 0
  call MPI_Win_lock_all(0, win)
  call MPIX_Xinvoke(f, d(1:8:2), 0, win, ierr)
  call expect(ierr, MPI_ERR_BUFFER, 'MPIX_Xinvoke: args must be contiguous')
  call MPIX_Xget(d, 1, MPI_INTEGER8, 0, zero, 1, MPI_INTEGER8, f, d(1:8:2), win, ierr)
  call expect(ierr, MPI_ERR_BUFFER, 'MPIX_Xget: args must be contiguous')
  call MPIX_Xput(d(1:8:2), 4, MPI_INTEGER8, 0, zero, 4, MPI_INTEGER8, f, win=win, ierror=ierr)
  call expect(ierr, MPI_ERR_BUFFER, 'MPIX_Xput: origin_addr must be contiguous')
  call MPIX_Ifunc_load_mem(img(1:64:2), 'bump_last', g, ierr)
  call expect(ierr, MPI_ERR_BUFFER, 'MPIX_Ifunc_load_mem: image must be contiguous')
  ! 2 GiB + 8 bytes, never touched: only the size is looked at.
  allocate(big(2_8**31 + 8), stat=st)
  if (st == 0) then
    call MPIX_Xinvoke(f, big, 0, win, ierr)
    call expect(ierr, MPI_ERR_ARG, 'MPIX_Xinvoke: args is 2147483656 bytes, past the limit of 2147483647 bytes')
    deallocate(big)
  else
    print '(a)', 'skip - cannot allocate 2 GiB of address space: args past the limit not checked'
  end if
  call MPI_Win_unlock_all(win)
  call MPIX_Ifunc_free(f)
  call MPI_Win_free(win)
  call MPI_Finalize()
  if (bad /= 0) error stop

contains

  ! ierr has class cls and its string starts with want.
  subroutine expect(ierr, cls, want)
    integer, intent(in) :: ierr, cls
    character(len=*), intent(in) :: want
    integer :: c, n
    character(len=MPI_MAX_ERROR_STRING) :: msg
    c = -1
    msg = ''
    n = 0
    if (ierr /= MPI_SUCCESS) then
      call MPI_Error_class(ierr, c)
      call MPI_Error_string(ierr, msg, n)
    end if
    if (c == cls .and. index(msg(1:n), want) == 1) then
      print '(a, a)', 'ok - ', msg(1:n)
    else
      print '(a, i0, a, i0, a, a, a, a)', 'FAIL - class ', c, ' (want ', cls, '), "', msg(1:n), '", want ', want
      bad = bad + 1
    end if
  end subroutine expect
end program f08_messages
