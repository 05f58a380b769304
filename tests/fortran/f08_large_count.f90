! MPI-4's large-count window calls from Fortran make XRDMA windows: MPICH's
! mpi_f08 MPI_Win_create, MPI_Win_allocate and MPI_Win_allocate_shared with
! an INTEGER(MPI_ADDRESS_KIND) disp_unit call the C functions
! MPI_Win_create_c, PMPI_Win_allocate_c and PMPI_Win_allocate_shared_c. On
! each kind of window every rank Xgets scaled_sum of the next rank's
! elements 1 and 2 (a displacement the disp_unit scales). MPICH only (Open
! MPI 4.1's mpi_f08 has no such forms); tests/fortran/test_large_count.sh
! runs it (argument 1: examples/mpi_f08_ifunc.xfn). Prints each check; exit
! status 0 when all hold.
program f08_large_count
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_int64_t
  use mpi_f08
  use mpix_xrdma
  implicit none
  integer(MPI_ADDRESS_KIND), parameter :: unit = 8, bytes = 32, one = 1
  character(len=*), parameter :: names(3) = [character(len=23) :: 'MPI_Win_create', 'MPI_Win_allocate', &
                                                                'MPI_Win_allocate_shared']
  integer(c_int64_t), target :: own(4)
  integer(c_int64_t), pointer :: mem(:)
  integer(c_int64_t) :: s, scale
  type(MPI_Win) :: win
  type(c_ptr) :: base
  type(MPIX_Ifunc) :: f
  integer :: rank, nranks, t, k, i, ierr, bad
  character(len=4096) :: path

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call get_command_argument(1, path)
  call MPIX_Ifunc_load(path, 'scaled_sum', f)
  bad = 0
  scale = 2
  t = mod(rank + 1, nranks)
  do k = 1, 3
    select case (k)
    case (1)
      call MPI_Win_create(own, bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, win)
      mem => own
    case (2)
      call MPI_Win_allocate(bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
      call c_f_pointer(base, mem, [4])
    case default
      call MPI_Win_allocate_shared(bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
      call c_f_pointer(base, mem, [4])
    end select
    mem = [(int(10 * rank + i, c_int64_t), i = 0, 3)]
    call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)
    call MPI_Barrier(MPI_COMM_WORLD)
    s = -1
    call MPI_Win_lock_all(0, win)
    call MPIX_Xget(s, 1, MPI_INTEGER8, t, one, 2, MPI_INTEGER8, f, scale, win, ierr)
    if (ierr == MPI_SUCCESS) call MPI_Win_flush(t, win, ierr)
    call MPI_Win_unlock_all(win)
    if (ierr == MPI_SUCCESS .and. s == 2 * (20 * t + 3)) then
      print '(a, i0, a, a, a)', 'ok - rank ', rank, ': Xget on a window of ', trim(names(k)), ' (large count)'
    else
      print '(a, i0, a, a, a, i0, a, i0, a, i0)', 'FAIL - rank ', rank, ': Xget on a window of ', trim(names(k)), &
        ' (large count): error ', ierr, ', sum ', s, ', want ', 2 * (20 * t + 3)
      bad = bad + 1
    end if
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Win_free(win)
  end do
  call MPIX_Ifunc_free(f)
  call MPI_Finalize()
  if (bad /= 0) error stop
end program f08_large_count
